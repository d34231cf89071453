package prommetrics_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// TestNewFailsWhole: a New that fails part-way (a series of its already
// registered: here the backend errors counter, its third) registers
// nothing, so that once the conflict is gone a New on the same registry
// succeeds, and the registry holds only what New registered.
func TestNewFailsWhole(t *testing.T) {
	reg := prometheus.NewRegistry()
	taken := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ratelimit", Name: "backend_errors_total",
		Help: "Redis failures seen by the limiter, by cause."}, []string{"cause"})
	reg.MustRegister(taken)
	_, err := prommetrics.New(reg, prommetrics.Options{})
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		t.Fatalf("New beside a registered series: %v, want prometheus.AlreadyRegisteredError", err)
	}
	reg.Unregister(taken)
	if _, err := prommetrics.New(reg, prommetrics.Options{}); err != nil {
		t.Fatalf("New again, the conflict gone: %v", err)
	}
}
