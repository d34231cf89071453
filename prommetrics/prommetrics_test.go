package prommetrics_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// collectorOn returns a registry with a collector in it and a Redis store
// of the given timeout on srv.
func collectorOn(t *testing.T, srv *miniredis.Miniredis, timeout time.Duration) (*prometheus.Registry, *prommetrics.Collector, store.Store) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	reg := prometheus.NewRegistry()
	c, err := prommetrics.New(reg, prommetrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := redisstore.New(rdb, redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	return reg, c, store
}

// A scripted sequence through a real HTTP server, then a scrape of
// /metrics: 3 admitted, 1 denied by Redis, 1 denied from the deny cache, 1
// request without an API key, then Redis goes away: 3 requests fail on it
// (which marks it down), 1 more is answered at once.
func TestScrape(t *testing.T) {
	srv := miniredis.RunT(t)
	reg, c, store := collectorOn(t, srv, 50*time.Millisecond)
	rules := []middleware.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}, Identity: keyfunc.Header("X-API-Key")}}
	lim, err := limiter.New(store, guard.Limits(rules))
	if err != nil {
		t.Fatal(err)
	}
	limit, err := middleware.NewWithLimiter(lim, rules, middleware.WithHook(c.Hook), middleware.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api", limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	api := httptest.NewServer(mux)
	defer api.Close()

	send := func(key string) int {
		req, _ := http.NewRequest(http.MethodGet, api.URL+"/api", nil)
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i, want := range []int{200, 200, 200, 429, 429} {
		if got := send("k1"); got != want {
			t.Fatalf("request %d: %d, want %d", i, got, want)
		}
	}
	if got := send(""); got != 401 {
		t.Fatalf("no API key: %d", got)
	}
	srv.Close()
	for range 4 {
		if got := send("k2"); got != 200 { // fail open (k1 is still denied from the deny cache)
			t.Fatalf("Redis down: %d", got)
		}
	}

	metrics := scrape(t, api.URL+"/metrics")
	for series, want := range map[string]string{
		`ratelimit_decisions_total{outcome="allowed",rule="per-key"}`:       "3",
		`ratelimit_decisions_total{outcome="denied",rule="per-key"}`:        "1",
		`ratelimit_decisions_total{outcome="cached_denied",rule="per-key"}`: "1",
		`ratelimit_decisions_total{outcome="no_identity",rule="per-key"}`:   "1",
		`ratelimit_decisions_total{outcome="error",rule="per-key"}`:         "4",
		`ratelimit_backend_errors_total{cause="unavailable"}`:               "1",
		`ratelimit_decision_duration_seconds_count{outcome="allowed"}`:      "3",
		`ratelimit_decision_duration_seconds_count{outcome="error"}`:        "4",
		`ratelimit_backend_state{state="down"}`:                             "1",
		`ratelimit_backend_state{state="up"}`:                               "0",
		`ratelimit_backend_state{state="fallback"}`:                         "0",
	} {
		if got := metrics[series]; got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
	errs := 0.0
	for series, v := range metrics {
		if strings.HasPrefix(series, "ratelimit_backend_errors_total") {
			n, _ := strconv.ParseFloat(v, 64)
			errs += n
		}
	}
	if errs != 4 { // the 3 failures (their cause depends on how the dial fails), then one skipped
		t.Errorf("backend errors: %v, want 4: %v", errs, metrics)
	}
}

// scrape reads the text exposition into series -> value.
func scrape(t *testing.T, url string) map[string]string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			out[line[:i]] = line[i+1:]
		}
	}
	return out
}

// A request refused by a leased rule's pool, in a stack of two, asks the
// other rule nothing: it counts as undecided for that rule, not allowed.
func TestUndecidedRule(t *testing.T) {
	reg, c, store := collectorOn(t, miniredis.RunT(t), 5*time.Second)
	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}}, Identity: keyfunc.IP()},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}, Lease: time.Second}, Identity: keyfunc.Constant("all")},
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lim, err := limiter.New(store, guard.Limits(rules), limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	limit, err := middleware.NewWithLimiter(lim, rules, middleware.WithHook(c.Hook))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api", limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	api := httptest.NewServer(mux)
	defer api.Close()
	for i, want := range []int{200, 429} { // the second refused by the global rule's pool
		res, err := http.Get(api.URL + "/api")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, res.StatusCode, want)
		}
	}
	metrics := scrape(t, api.URL+"/metrics")
	for series, want := range map[string]string{
		`ratelimit_decisions_total{outcome="allowed",rule="per-ip"}`:   "1",
		`ratelimit_decisions_total{outcome="undecided",rule="per-ip"}`: "1",
		`ratelimit_decisions_total{outcome="allowed",rule="global"}`:   "1",
		`ratelimit_decisions_total{outcome="denied",rule="global"}`:    "1",
	} {
		if got := metrics[series]; got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
}
