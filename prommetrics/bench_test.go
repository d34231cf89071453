package prommetrics_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// The collector's cost per event: an allowed request of one rule, as the
// middleware reports it.
func BenchmarkHook(b *testing.B) {
	c, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := middleware.Event{Request: httptest.NewRequest("GET", "/", nil), Rules: []string{"per-ip"},
		Outcome: "allowed", Backend: "up", Duration: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		c.Hook(e)
	}
}
