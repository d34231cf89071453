package prommetrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// The collector's cost per event: an allowed request of one rule, as the
// middleware reports it.
func BenchmarkHook(b *testing.B) {
	c, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := guard.Event{Context: context.Background(), Route: "/", Rules: []string{"per-ip"},
		Outcome: "allowed", Backend: "up", Duration: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		c.Hook(e)
	}
}
