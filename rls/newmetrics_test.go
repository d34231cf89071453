package rls_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// TestNewMetricsFailsWhole: a NewMetrics that cannot register one of its
// series (another collector has its name) registers none, so that it can
// be tried again on the same registry once the conflict is gone.
func TestNewMetricsFailsWhole(t *testing.T) {
	reg := prometheus.NewRegistry()
	taken := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ratelimit", Subsystem: "rls", Name: "failures_total", Help: "Decisions the limiter failed to make, by cause."}, []string{"cause"})
	if err := reg.Register(taken); err != nil {
		t.Fatal(err)
	}
	var already prometheus.AlreadyRegisteredError
	if _, err := rls.NewMetrics(reg); !errors.As(err, &already) {
		t.Fatalf("NewMetrics on a taken name: %v, want AlreadyRegisteredError", err)
	}
	reg.Unregister(taken)
	if _, err := rls.NewMetrics(reg); err != nil {
		t.Fatalf("NewMetrics once the name is free: %v", err)
	}
}
