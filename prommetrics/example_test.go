package prommetrics_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// The collector wired into a chi router, with the route pattern as a
// label, and /metrics served beside the API.
func Example() {
	reg := prometheus.NewRegistry()
	metrics, err := prommetrics.New(reg, prommetrics.Options{RouteLabel: true})
	if err != nil {
		panic(err)
	}
	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Minute}}, Identity: keyfunc.IP()},
	}
	lim, err := limiter.New(memstore.Must(), guard.Limits(rules)) // or a Redis store
	if err != nil {
		panic(err)
	}
	limit, err := middleware.NewWithLimiter(lim, rules, middleware.WithHook(metrics.Hook))
	if err != nil {
		panic(err)
	}
	r := chi.NewRouter()
	r.With(limit).Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "an item") })
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	for range 3 {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/1", nil))
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var lines []string
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if strings.HasPrefix(line, "ratelimit_decisions_total") {
			lines = append(lines, line)
		}
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// ratelimit_decisions_total{outcome="allowed",route="/items/{id}",rule="per-ip"} 2
	// ratelimit_decisions_total{outcome="denied",route="/items/{id}",rule="per-ip"} 1
}
