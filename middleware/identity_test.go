package middleware_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// A request without an identity is told which one is missing, the
// header's name and never a value, in text and in problem+json.
func TestNoIdentitySaysWhichIsMissing(t *testing.T) {
	_, c := redistest.Mini(t)
	h := mwtest.New(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-key",
		Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}, Identity: keyfunc.Header("X-API-Key")}})(ok)
	res := do(h, "GET", "/", "203.0.113.9:1")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "rate limit per-key needs header X-Api-Key") {
		t.Errorf("text: %d %q", res.StatusCode, body)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.9:1"
	r.Header.Set("Accept", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var p struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != 401 || p.Detail != "rate limit per-key needs header X-Api-Key" ||
		w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("problem: %v %+v %q", err, p, w.Header().Get("Content-Type"))
	}
}

// A route-keyed rule outside a router that sets patterns is the server's
// misconfiguration: 500, through the error handler, not a 401 to every
// client.
func TestRouteKeyWithoutPatternIsAServerError(t *testing.T) {
	_, c := redistest.Mini(t)
	var errs []error
	h := mwtest.New(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-route",
		Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}, Identity: keyfunc.Route()}},
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))(ok)
	if res := do(h, "GET", "/users/alice", "203.0.113.9:1"); res.StatusCode != http.StatusInternalServerError {
		t.Errorf("status %d, want 500", res.StatusCode)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ratelimit.ErrConfig) || strings.Contains(errs[0].Error(), "alice") {
		t.Errorf("errors %v, want one ErrConfig without the path", errs)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /users/{id}", h)
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/users/alice", nil)
	r.RemoteAddr = "203.0.113.9:1"
	mux.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Errorf("inside a ServeMux: %d, want 200", w.Code)
	}
}
