package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/internal/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// The middleware's cost without and with the collector.
func BenchmarkHook(b *testing.B) {
	c, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.Options{})
	if err != nil {
		b.Fatal(err)
	}
	mwtest.BenchHook(b, c.Hook)
}
