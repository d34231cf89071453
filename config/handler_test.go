package config_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestHandlerMatchesPatterns: Handler limits a request by the stack whose
// pattern it matches, the most specific winning, keys a route rule by
// that pattern, and passes other requests through unlimited.
func TestHandlerMatchesPatterns(t *testing.T) {
	limits, _ := load(t, memstore.Must(), `rules:
  - name: login
    key: route
    fixed_window: 1/1h anchored
  - name: items
    key: route
    fixed_window: 2/1h anchored
stacks:
  - name: login
    rules: [login]
    match: ["POST /login"]
  - name: items
    rules: [items]
    match: ["/items/", "GET /items/{id}"]
`)
	h := limits.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i, tc := range []struct {
		method, path string
		want         int
		limit        string
	}{
		{"POST", "/login", 200, "1"},
		{"POST", "/login", 429, "1"},
		{"GET", "/login", 200, ""}, // no pattern: not limited
		{"GET", "/items/1", 200, "2"},
		{"GET", "/items/2", 200, "2"}, // one count per pattern, whatever the id
		{"GET", "/items/3", 429, "2"},
		{"DELETE", "/items/3", 200, "2"}, // "/items/" has a count of its own
		{"GET", "/health", 200, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if got, limit := w.Code, w.Header().Get("X-RateLimit-Limit"); got != tc.want || limit != tc.limit {
			t.Errorf("request %d, %s %s: %d with limit %q, want %d with %q", i, tc.method, tc.path, got, limit, tc.want, tc.limit)
		}
	}
}

// TestMiddlewareOfNoStackPanics: wiring a stack the file does not have
// is a mistake found at startup.
func TestMiddlewareOfNoStackPanics(t *testing.T) {
	limits, _ := load(t, memstore.Must(), version("p", 0))
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	limits.Middleware("web")
}

// TestHandlerChargesAStackOnce: a request that Handler decided by a stack
// passes through Middleware of that stack undecided, and a request the
// mux only redirects is not limited.
func TestHandlerChargesAStackOnce(t *testing.T) {
	limits, _ := load(t, memstore.Must(), `rules:
  - name: items
    key: {constant: all}
    fixed_window: 2/1h anchored
stacks:
  - name: items
    rules: [items]
    match: ["/items/"]
`)
	mux := http.NewServeMux()
	mux.Handle("/items/", limits.Middleware("items")(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	h := limits.Handler(mux)
	for i, tc := range []struct {
		path      string
		want      int
		remaining string
	}{
		{"/items", 307, ""},    // redirected to /items/ by the mux: not limited
		{"/items", 307, ""},    // nor the second time
		{"/items/a", 200, "1"}, // one unit, not two
		{"/items/b", 200, "0"},
		{"/items/c", 429, "0"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tc.path, nil))
		if got, rem := w.Code, w.Header().Get("X-RateLimit-Remaining"); got != tc.want || rem != tc.remaining {
			t.Errorf("request %d, %s: %d with remaining %q, want %d with %q", i, tc.path, got, rem, tc.want, tc.remaining)
		}
	}
}

// TestClientIPHeaderOnly: behind nginx setting X-Real-IP, with
// client_ip.header naming it, a client's own X-Forwarded-For neither
// changes its identity nor claims an exempt address.
func TestClientIPHeaderOnly(t *testing.T) {
	limits, _ := load(t, memstore.Must(), `client_ip:
  trusted_proxies: [10.0.0.0/8]
  header: x-real-ip
exempt: [192.0.2.0/24]
rules:
  - name: per-ip
    key: ip
    fixed_window: 1/1h anchored
stacks:
  - name: api
    rules: [per-ip]
    match: ["/"]
`)
	h := limits.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i, tc := range []struct {
		xff  string
		want int
	}{{"198.51.100.1", 200}, {"198.51.100.2", 429}, {"192.0.2.1", 429}} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.5:1"
		r.Header.Set("X-Real-IP", "203.0.113.9")
		r.Header.Set("X-Forwarded-For", tc.xff)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("request %d, X-Forwarded-For %s: %d, want %d", i, tc.xff, w.Code, tc.want)
		}
	}
}
