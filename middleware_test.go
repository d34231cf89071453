package ratelimit_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

var epoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func clock() middleware.Option {
	return middleware.WithLimiterOptions(limiter.WithClock(func() time.Time { return epoch }))
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// do sends one request from remote (with header pairs) and returns the
// response.
func do(h http.Handler, method, path, remote string, hdr ...string) *http.Response {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func perIP(limit int) middleware.Rule {
	return middleware.Rule{Name: "per-ip", Key: keyfunc.IP(), Algorithm: algorithms.FixedWindow{Limit: limit, Window: time.Minute}}
}

func TestStatusAndHeaders(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			mw := middleware.Must(b.Client, []middleware.Rule{perIP(2)}, clock(), middleware.WithLimiterOptions(limiter.WithPrefix("hdr")))
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
					"X-RateLimit-Reset":     strconv.FormatInt(epoch.Unix()+60, 10), // the end of the window
					"Retry-After":           want.retry,
				} {
					if got := res.Header.Values(name); (v == "" && len(got) != 0) || (v != "" && (len(got) != 1 || got[0] != v)) {
						t.Errorf("request %d: %s = %q, want %q", i, name, got, v)
					}
				}
			}
			res := do(h, "GET", "/", "203.0.113.9:1234", "Accept", "text/html, application/json;q=0.9")
			var p problem
			if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Accept JSON: Content-Type %q", ct)
			}
			if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.Status != 429 || p.RetryAfter != 60 || len(p.Rules) != 1 || p.Rules[0] != "per-ip" || p.Title != "Too Many Requests" {
				t.Errorf("problem body: %+v", p)
			}
			if res := do(h, "GET", "/", "198.51.100.1:1"); res.StatusCode != 200 {
				t.Errorf("another client: %d, want 200", res.StatusCode)
			}
		})
	}
}

// problem is the JSON body of a 429.
type problem struct {
	Type, Title, Detail string
	Status              int
	Rules               []string
	RetryAfter          int64 `json:"retry_after"`
}

func TestStackedRulesAreAllOrNothing(t *testing.T) {
	_, c := redistest.Mini(t)
	mw := middleware.Must(c, []middleware.Rule{
		{Name: "per-user", Key: keyfunc.Header("X-User"), Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}},
		{Name: "global", Key: keyfunc.Constant("all"), Algorithm: algorithms.SlidingWindow{Limit: 3, Window: time.Hour}},
	}, clock())
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
			var p problem
			_ = json.NewDecoder(res.Body).Decode(&p)
			if len(p.Rules) != 1 || p.Rules[0] != step.rule {
				t.Errorf("step %d: denied by %v, want %s", i, p.Rules, step.rule)
			}
		}
	}
}

func TestFailurePolicies(t *testing.T) {
	for _, tc := range []struct {
		policy middleware.FailurePolicy
		status int
	}{{middleware.FailOpen, 200}, {middleware.FailClosed, 503}} {
		s := redistest.Start(t)
		var mu sync.Mutex
		var errs []error
		mw := middleware.Must(s.Client, []middleware.Rule{perIP(100)},
			middleware.WithFailurePolicy(tc.policy),
			middleware.WithLimiterOptions(limiter.WithTimeout(200*time.Millisecond)),
			middleware.WithErrorHandler(func(r *http.Request, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }))
		h := mw(ok)
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "99" {
			t.Fatalf("policy %d, Redis up: %d %v", tc.policy, res.StatusCode, res.Header)
		}
		s.Stop()
		res := do(h, "GET", "/", "203.0.113.9:1")
		got := body(t, res)
		if res.StatusCode != tc.status {
			t.Errorf("policy %d, Redis down: status %d, want %d", tc.policy, res.StatusCode, tc.status)
		}
		if res.Header.Get("X-RateLimit-Remaining") != "" || strings.Contains(got, "refused") || strings.Contains(got, "dial") {
			t.Errorf("policy %d: Redis down leaked state or the error: %v %q", tc.policy, res.Header, got)
		}
		if tc.policy == middleware.FailClosed && res.Header.Get("Retry-After") != "1" {
			t.Errorf("fail closed: Retry-After %q, want 1", res.Header.Get("Retry-After"))
		}
		mu.Lock()
		if len(errs) != 1 || !errors.Is(errs[0], limiter.ErrBackend) {
			t.Errorf("policy %d: error handler got %v, want one ErrBackend", tc.policy, errs)
		}
		mu.Unlock()
		s.Restart(t)
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "99" {
			t.Errorf("policy %d, Redis back (empty, no scripts): %d remaining %q", tc.policy, res.StatusCode, res.Header.Get("X-RateLimit-Remaining"))
		}
	}
}

func TestShadowMode(t *testing.T) {
	_, c := redistest.Mini(t)
	var events []middleware.Event
	mw := middleware.Must(c, []middleware.Rule{perIP(1)}, clock(), middleware.WithShadowMode(),
		middleware.WithHook(func(e middleware.Event) { events = append(events, e) }))
	h := mw(ok)
	for i := range 3 {
		res := do(h, "GET", "/", "203.0.113.9:1")
		if res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "0" || res.Header.Get("Retry-After") != "" {
			t.Fatalf("request %d in shadow mode: %d %v", i, res.StatusCode, res.Header)
		}
	}
	if len(events) != 3 || events[0].Shadow || !events[1].Shadow || !events[2].Shadow || events[1].Decision.Allowed {
		t.Fatalf("hook events: %+v", events)
	}
	if h := events[0].KeyHashes; len(h) != 1 || h[0] == "" || strings.Contains(h[0], "203.0") || h[0] != events[2].KeyHashes[0] {
		t.Errorf("key hashes %v", h)
	}
}

func TestExemptions(t *testing.T) {
	_, c := redistest.Mini(t)
	allow, err := middleware.ExemptIPs(keyfunc.IPConfig{}, "10.0.0.0/8", "2001:db8::1")
	if err != nil {
		t.Fatal(err)
	}
	h := middleware.Must(c, []middleware.Rule{perIP(1)}, clock(), middleware.WithExempt(allow))(ok)
	for _, remote := range []string{"10.1.2.3:1", "[2001:db8::1]:1"} {
		for range 3 {
			if res := do(h, "GET", "/", remote); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Limit") != "" {
				t.Fatalf("exempt %s: %d %v", remote, res.StatusCode, res.Header)
			}
		}
	}
	do(h, "GET", "/", "[2001:db8::2]:1")
	if res := do(h, "GET", "/", "[2001:db8::2]:1"); res.StatusCode != 429 {
		t.Errorf("non-exempt neighbour: %d, want 429", res.StatusCode)
	}
	if _, err := middleware.ExemptIPs(keyfunc.IPConfig{}, "10.0.0.0/99"); !errors.Is(err, ratelimit.ErrConfig) {
		t.Errorf("bad CIDR: %v", err)
	}
	if _, err := middleware.ExemptIPs(keyfunc.IPConfig{IPv4PrefixLen: 40}); !errors.Is(err, ratelimit.ErrConfig) {
		t.Errorf("bad IPConfig: %v", err)
	}
}

func TestKeyFunctionFailures(t *testing.T) {
	_, c := redistest.Mini(t)
	apiKey := func(optional bool, fallback keyfunc.KeyFunc) middleware.Rule {
		return middleware.Rule{Name: "per-key", Key: keyfunc.Header("X-API-Key"), Fallback: fallback, Optional: optional,
			Algorithm: algorithms.TokenBucket{Capacity: 1, Rate: 1, Period: time.Hour}}
	}
	var errs []error
	onErr := middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) })
	for _, tc := range []struct {
		name    string
		rule    middleware.Rule
		opts    []middleware.Option
		first   int
		second  int
		handled int
	}{
		{"reject", apiKey(false, nil), nil, 401, 401, 2},
		{"reject with 429", apiKey(false, nil), []middleware.Option{middleware.WithKeyErrorStatus(429)}, 429, 429, 2},
		{"skip", apiKey(true, nil), nil, 200, 200, 0},
		{"fall back to IP", apiKey(false, keyfunc.IP()), nil, 200, 429, 0},
		{"empty identity is a failure", middleware.Rule{Name: "per-key", Key: func(*http.Request) (string, error) { return "", nil },
			Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}}, nil, 401, 401, 2},
	} {
		errs = nil
		opts := append([]middleware.Option{clock(), onErr, middleware.WithLimiterOptions(limiter.WithPrefix(strings.ReplaceAll(tc.name, " ", "-")))}, tc.opts...)
		h := middleware.Must(c, []middleware.Rule{tc.rule}, opts...)(ok)
		first := do(h, "GET", "/", "203.0.113.9:1").StatusCode
		second := do(h, "GET", "/", "203.0.113.9:1").StatusCode
		if first != tc.first || second != tc.second || len(errs) != tc.handled {
			t.Errorf("%s: statuses %d, %d and %d errors, want %d, %d and %d", tc.name, first, second, len(errs), tc.first, tc.second, tc.handled)
		}
		for _, err := range errs {
			if !errors.Is(err, keyfunc.ErrNoKey) {
				t.Errorf("%s: error %v, want ErrNoKey", tc.name, err)
			}
		}
	}
}

func TestCosts(t *testing.T) {
	_, c := redistest.Mini(t)
	cost := func(r *http.Request) int {
		n := 0
		for _, ch := range r.URL.Query().Get("n") {
			n = n*10 + int(ch-'0')
		}
		if r.URL.Query().Has("neg") {
			return -n
		}
		return n
	}
	var errs []error
	h := middleware.Must(c, []middleware.Rule{{Name: "batch", Key: keyfunc.IP(), Cost: cost,
		Algorithm: algorithms.TokenBucket{Capacity: 10, Rate: 1, Period: time.Second}}}, clock(),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))(ok)
	for i, step := range []struct {
		query, remaining, retry string
		status                  int
	}{
		{"n=4", "6", "", 200},
		{"n=0", "6", "", 200},
		{"n=7", "6", "1", 429},
		{"n=11", "6", "", 429}, // can never be admitted: no Retry-After
		{"n=3&neg", "", "", 400},
		{"n=6", "0", "", 200},
	} {
		res := do(h, "POST", "/batch?"+step.query, "203.0.113.9:1")
		if res.StatusCode != step.status || res.Header.Get("X-RateLimit-Remaining") != step.remaining || res.Header.Get("Retry-After") != step.retry {
			t.Errorf("step %d (%s): %d remaining %q retry %q, want %d %q %q", i, step.query, res.StatusCode,
				res.Header.Get("X-RateLimit-Remaining"), res.Header.Get("Retry-After"), step.status, step.remaining, step.retry)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], middleware.ErrBadCost) {
		t.Errorf("errors reported: %v, want one ErrBadCost", errs)
	}
}

func TestIETFHeadersAndCustomDenyHandler(t *testing.T) {
	_, c := redistest.Mini(t)
	var denied limiter.Decision
	h := middleware.Must(c, []middleware.Rule{
		perIP(2),
		{Name: "global", Key: keyfunc.Constant("all"), Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}},
	}, clock(), middleware.WithHeaders(headers.IETF), middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d limiter.Decision) {
		denied = d
		w.WriteHeader(http.StatusServiceUnavailable)
	}))(ok)
	res := do(h, "GET", "/", "203.0.113.9:1")
	for name, want := range map[string]string{
		"RateLimit-Policy":  `"per-ip";q=2;w=60, "global";q=100;w=60`,
		"RateLimit":         `"per-ip";r=1;t=60, "global";r=99;t=60`,
		"X-RateLimit-Limit": "",
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	do(h, "GET", "/", "203.0.113.9:1")
	if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 503 || denied.Allowed || denied.RetryAfter() != 60*time.Second {
		t.Errorf("custom deny handler: status %d, decision %+v", res.StatusCode, denied)
	}
}

func TestChiRoutingAndNesting(t *testing.T) {
	_, c := redistest.Mini(t)
	r := chi.NewRouter()
	r.Use(middleware.Must(c, []middleware.Rule{{Name: "global", Key: keyfunc.Constant("all"),
		Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}}, clock()))
	r.Route("/api", func(r chi.Router) {
		// Route() sees the full pattern only after routing: inline with r.With.
		perRoute := middleware.Must(c, []middleware.Rule{{Name: "per-route", Key: keyfunc.Join(keyfunc.Route(), keyfunc.IP()),
			Algorithm: algorithms.SlidingLog{Limit: 2, Window: time.Minute}}}, clock())
		strict := middleware.Must(c, []middleware.Rule{{Name: "strict", Key: keyfunc.IP(),
			Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}}}, clock())
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

func TestInvalidMiddlewareConfiguration(t *testing.T) {
	_, c := redistest.Mini(t)
	for _, tc := range []struct {
		name  string
		rdb   redis.Scripter
		rules []middleware.Rule
		opts  []middleware.Option
		want  string
	}{
		{"no key", c, []middleware.Rule{{Name: "a", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}}, nil, `rule "a": no Key`},
		{"bad algorithm", c, []middleware.Rule{{Name: "per-ip", Key: keyfunc.IP(), Algorithm: algorithms.SlidingLog{Limit: 0, Window: time.Second}}}, nil, `rule "per-ip"`},
		{"bad policy", c, []middleware.Rule{perIP(1)}, []middleware.Option{middleware.WithFailurePolicy(7)}, "failure policy"},
		{"bad status", c, []middleware.Rule{perIP(1)}, []middleware.Option{middleware.WithKeyErrorStatus(200)}, "status"},
		{"bad timeout", c, []middleware.Rule{perIP(1)}, []middleware.Option{middleware.WithLimiterOptions(limiter.WithTimeout(-1))}, "timeout"},
		{"duplicate", c, []middleware.Rule{perIP(1), perIP(2)}, nil, "duplicate"},
	} {
		_, err := middleware.New(tc.rdb, tc.rules, tc.opts...)
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrConfig mentioning %q", tc.name, err, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic on an invalid rule")
		}
	}()
	middleware.Must(c, nil)
}

func TestFallbackStore(t *testing.T) {
	s := redistest.Start(t)
	var errs []error
	h := middleware.Must(s.Client, []middleware.Rule{perIP(2)},
		middleware.WithLimiterOptions(limiter.WithFallback(memstore.Must(), time.Minute)),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))(ok)
	if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("Redis up: %d %v", res.StatusCode, res.Header)
	}
	s.Stop()
	for i, want := range []int{200, 200, 429} { // the in-process store limits on its own
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != want || res.Header.Get("X-RateLimit-Limit") != "2" {
			t.Errorf("request %d with Redis down: %d %v, want %d decided by the fallback", i, res.StatusCode, res.Header, want)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], limiter.ErrBackend) {
		t.Errorf("errors reported: %v, want the one Redis failure", errs)
	}
}

func TestInProcessStore(t *testing.T) {
	mw, err := middleware.NewWithStore(memstore.Must(), []middleware.Rule{perIP(1)}, clock())
	if err != nil {
		t.Fatal(err)
	}
	h := mw(ok)
	for i, want := range []int{200, 429} {
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != want || res.Header.Get("Retry-After") != map[int]string{200: "", 429: "60"}[want] {
			t.Errorf("request %d: %d %v, want %d", i, res.StatusCode, res.Header, want)
		}
	}
}
