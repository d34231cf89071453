package prommetrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// The middleware's cost with and without the collector, on the memstore
// (no network: the collector's share is not hidden by a Redis round trip).
func BenchmarkHook(b *testing.B) {
	for _, withCollector := range []bool{false, true} {
		name := "without"
		var opts []middleware.Option
		if withCollector {
			name = "with"
			c, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.Options{})
			if err != nil {
				b.Fatal(err)
			}
			opts = append(opts, middleware.WithHook(c.Hook))
		}
		b.Run(name+"-collector", func(b *testing.B) {
			mw, err := middleware.NewWithStore(memstore.Must(), []middleware.Rule{{Name: "per-ip", Key: keyfunc.IP(),
				Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}}}, opts...)
			if err != nil {
				b.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
