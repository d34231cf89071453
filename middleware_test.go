package ratelimit_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func TestStatusAndHeaders(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			mw := limit(t, b.Client, []middleware.Rule{perIP(2)}, stack{Lim: []limiter.Option{at(), limiter.WithPrefix("hdr")}})
			h := mw(ok)
			for i, want := range []struct {
				status              int
				remaining, retry    string
				contentType, inBody string
			}{
				{200, "1", "", "text/plain; charset=utf-8", "ok"},
				{200, "0", "", "text/plain; charset=utf-8", "ok"},
				{429, "0", "60", "text/plain; charset=utf-8", "Too Many Requests: rate limit per-ip exceeded; retry in 60 s"},
			} {
				res := do(h, "GET", "/", "203.0.113.9:1234")
				got := body(t, res)
				if res.StatusCode != want.status || !strings.Contains(got, want.inBody) {
					t.Fatalf("request %d: %d %q, want %d containing %q", i, res.StatusCode, got, want.status, want.inBody)
				}
				for name, v := range map[string]string{
					"X-RateLimit-Limit":     "2",
					"X-RateLimit-Remaining": want.remaining,
					"X-RateLimit-Reset":     strconv.FormatInt(mwtest.Epoch.Unix()+60, 10), // the end of the window
					"Retry-After":           want.retry,
				} {
					if got := res.Header.Values(name); (v == "" && len(got) != 0) || (v != "" && (len(got) != 1 || got[0] != v)) {
						t.Errorf("request %d: %s = %q, want %q", i, name, got, v)
					}
				}
			}
			res := do(h, "GET", "/", "203.0.113.9:1234", "Accept", "text/html, application/json;q=0.9")
			var p mwtest.Problem
			if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Accept JSON: Content-Type %q", ct)
			}
			if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" || p.Status != 429 || p.RetryAfter != 60 ||
				len(p.ViolatedPolicies) != 1 || p.ViolatedPolicies[0] != "per-ip" || p.Title != "Too Many Requests" {
				t.Errorf("problem body: %+v", p)
			}
			if res := do(h, "GET", "/", "198.51.100.1:1"); res.StatusCode != 200 {
				t.Errorf("another client: %d, want 200", res.StatusCode)
			}
		})
	}
}

func TestStackedRulesAreAllOrNothing(t *testing.T) {
	_, c := redistest.Mini(t)
	mw := limit(t, c, []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-user", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}}, Identity: keyfunc.Header("X-User")},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.SlidingWindow{Limit: 3, Window: time.Hour}}, Identity: keyfunc.Constant("all")},
	}, stack{Lim: []limiter.Option{at()}})
	h := mw(ok)
	for i, step := range []struct {
		user   string
		status int
		rule   string
	}{
		{"a", 200, "per-user"},
		{"a", 429, "per-user"}, // denied by per-user: must not consume global
		{"a", 429, "per-user"},
		{"b", 200, "global"},
		{"c", 200, "global"}, // global's third unit: only possible if a's denials consumed nothing
		{"d", 429, "global"},
	} {
		res := do(h, "GET", "/", "203.0.113.9:1", "X-User", step.user, "Accept", "application/json")
		if res.StatusCode != step.status {
			t.Fatalf("step %d (user %s): status %d, want %d", i, step.user, res.StatusCode, step.status)
		}
		if step.status == 429 {
			var p mwtest.Problem
			_ = json.NewDecoder(res.Body).Decode(&p)
			if len(p.ViolatedPolicies) != 1 || p.ViolatedPolicies[0] != step.rule {
				t.Errorf("step %d: denied by %v, want %s", i, p.ViolatedPolicies, step.rule)
			}
		}
	}
}

func TestFailurePolicies(t *testing.T) {
	for _, tc := range []struct {
		policy string
		opts   []middleware.Option
		status int
	}{{"fail open", nil, 200}, {"fail closed", []middleware.Option{middleware.WithFailClosed()}, 503}} {
		s := redistest.Start(t)
		var mu sync.Mutex
		var errs []error
		mw := limit(t, s.Client, []middleware.Rule{perIP(100)}, stack{
			Store: []redisstore.Option{redisstore.WithTimeout(200 * time.Millisecond)},
			Lim:   []limiter.Option{limiter.WithRetryInterval(100 * time.Millisecond)},
			MW: append(tc.opts,
				middleware.WithErrorHandler(func(r *http.Request, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })),
		})
		h := mw(ok)
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "99" {
			t.Fatalf("%s, Redis up: %d %v", tc.policy, res.StatusCode, res.Header)
		}
		s.Stop()
		res := do(h, "GET", "/", "203.0.113.9:1")
		got := body(t, res)
		if res.StatusCode != tc.status {
			t.Errorf("%s, Redis down: status %d, want %d", tc.policy, res.StatusCode, tc.status)
		}
		if res.Header.Get("X-RateLimit-Remaining") != "" || strings.Contains(got, "refused") || strings.Contains(got, "dial") {
			t.Errorf("%s: Redis down leaked state or the error: %v %q", tc.policy, res.Header, got)
		}
		if tc.status == 503 && res.Header.Get("Retry-After") != "1" {
			t.Errorf("fail closed: Retry-After %q, want 1", res.Header.Get("Retry-After"))
		}
		// Two more failures mark Redis down: the next request follows the
		// policy without trying Redis.
		for range 3 {
			if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != tc.status {
				t.Errorf("%s, Redis down or marked down: status %d, want %d", tc.policy, res.StatusCode, tc.status)
			}
		}
		mu.Lock()
		if len(errs) != 4 || !errors.Is(errs[2], limiter.ErrBackend) || errors.Is(errs[2], limiter.ErrUnavailable) || !errors.Is(errs[3], limiter.ErrUnavailable) {
			t.Errorf("%s: error handler got %v, want 3 Redis failures, then ErrUnavailable", tc.policy, errs)
		}
		mu.Unlock()
		s.Restart(t)
		time.Sleep(150 * time.Millisecond) // past the retry interval: the next request probes
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "99" {
			t.Errorf("%s, Redis back (empty, no scripts): %d remaining %q", tc.policy, res.StatusCode, res.Header.Get("X-RateLimit-Remaining"))
		}
	}
}

func TestChiRoutingAndNesting(t *testing.T) {
	_, c := redistest.Mini(t)
	r := chi.NewRouter()
	r.Use(limit(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: keyfunc.Constant("all")}}, stack{Lim: []limiter.Option{at()}}))
	r.Route("/api", func(r chi.Router) {
		// Route() sees the full pattern only after routing: inline with r.With.
		perRoute := limit(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-route", Algorithm: algorithms.SlidingLog{Limit: 2, Window: time.Minute}}, Identity: keyfunc.Join(keyfunc.Route(), keyfunc.IP())}}, stack{Lim: []limiter.Option{at()}})
		strict := limit(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "strict", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}}, Identity: keyfunc.IP()}}, stack{Lim: []limiter.Option{at()}})
		r.With(perRoute).Get("/items/{id}", ok)
		r.With(perRoute, strict).Post("/items", ok)
	})
	r.Get("/health", ok)

	for i, step := range []struct {
		method, path string
		status       int
		remaining    string
	}{
		{"GET", "/api/items/1", 200, "1"}, // the inner per-route rule's header overwrote the global one
		{"GET", "/api/items/2", 200, "0"}, // same route pattern, another id: same bucket
		{"GET", "/api/items/3", 429, "0"},
		{"POST", "/api/items", 200, "0"}, // a bucket of its own in per-route; strict has 0 left
		{"POST", "/api/items", 429, "0"}, // nested middlewares decide independently
		{"GET", "/health", 200, "94"},    // global, mounted first, counted all six requests
	} {
		res := do(r, step.method, step.path, "203.0.113.9:1")
		if res.StatusCode != step.status || res.Header.Get("X-RateLimit-Remaining") != step.remaining {
			t.Errorf("step %d %s %s: %d remaining %q, want %d %q", i, step.method, step.path, res.StatusCode, res.Header.Get("X-RateLimit-Remaining"), step.status, step.remaining)
		}
		if n := len(res.Header.Values("X-RateLimit-Remaining")); n != 1 {
			t.Errorf("step %d: %d X-RateLimit-Remaining values, want 1", i, n)
		}
	}
}

func TestFallbackStore(t *testing.T) {
	s := redistest.Start(t)
	var errs []error
	h := limit(t, s.Client, []middleware.Rule{perIP(2)}, stack{
		Lim: []limiter.Option{limiter.WithFallback(memstore.Must()), limiter.WithRetryInterval(time.Minute)},
		MW:  []middleware.Option{middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) })},
	})(ok)
	if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("Redis up: %d %v", res.StatusCode, res.Header)
	}
	s.Stop()
	for i, want := range []int{200, 200, 429, 429} { // the in-process store limits on its own
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != want || res.Header.Get("X-RateLimit-Limit") != "2" {
			t.Errorf("request %d with Redis down: %d %v, want %d decided by the fallback", i, res.StatusCode, res.Header, want)
		}
	}
	if len(errs) != 3 || !errors.Is(errs[2], limiter.ErrBackend) {
		t.Errorf("errors reported: %v, want the 3 Redis failures that marked it down", errs)
	}
}
