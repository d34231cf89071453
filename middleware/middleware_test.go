package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func TestShadowMode(t *testing.T) {
	_, c := redistest.Mini(t)
	var events []guard.Event
	mw := mwtest.New(t, c, []middleware.Rule{perIP(1)}, clock(), middleware.WithShadowMode(),
		middleware.WithHook(func(e guard.Event) { events = append(events, e) }))
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
	h := mwtest.New(t, c, []middleware.Rule{perIP(1)}, clock(), middleware.WithExempt(allow))(ok)
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

// TestExemptIPsBehindProxies: behind nginx setting X-Real-IP, a client
// that sends an exempt address in X-Forwarded-For is exempt unless
// IPConfig.Header names X-Real-IP (unnamed, the first field present wins:
// today's behaviour, which the proxies must strip fields to make safe).
func TestExemptIPsBehindProxies(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.5:1"
	r.Header.Set("X-Real-IP", "203.0.113.9")     // set by the proxy
	r.Header.Set("X-Forwarded-For", "192.0.2.1") // sent by the client
	for _, tc := range []struct {
		header string
		exempt bool
	}{{"X-Real-IP", false}, {"x-real-ip", false}, {"", true}} {
		allow, err := middleware.ExemptIPs(keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8"}, Header: tc.header}, "192.0.2.0/24")
		if err != nil {
			t.Fatal(err)
		}
		if got := allow(r); got != tc.exempt {
			t.Errorf("Header %q: exempt %v, want %v", tc.header, got, tc.exempt)
		}
	}
	if _, err := middleware.ExemptIPs(keyfunc.IPConfig{Header: "X-Client-IP"}, "192.0.2.0/24"); !errors.Is(err, ratelimit.ErrConfig) {
		t.Errorf("unknown Header: %v, want ErrConfig", err)
	}
}

func TestKeyFunctionFailures(t *testing.T) {
	_, c := redistest.Mini(t)
	apiKey := func(optional bool, fallback keyfunc.KeyFunc) middleware.Rule {
		return middleware.Rule{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.TokenBucket{Capacity: 1, Rate: 1, Period: time.Hour}}, Identity: keyfunc.Header("X-API-Key"), AltIdentity: fallback, Optional: optional}
	}
	var errs []error
	onErr := middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) })
	for _, tc := range []struct {
		name    string
		rule    middleware.Rule
		opts    []any
		first   int
		second  int
		handled int
	}{
		{"reject", apiKey(false, nil), nil, 401, 401, 2},
		{"reject with 429", apiKey(false, nil), []any{middleware.WithKeyErrorStatus(429)}, 429, 429, 2},
		{"skip", apiKey(true, nil), nil, 200, 200, 0},
		{"fall back to IP", apiKey(false, keyfunc.IP()), nil, 200, 429, 0},
		{"empty identity is a failure", middleware.Rule{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}}, Identity: func(*http.Request) (string, error) { return "", nil }}, nil, 401, 401, 2},
	} {
		errs = nil
		opts := append([]any{clock(), onErr, limiter.WithPrefix(strings.ReplaceAll(tc.name, " ", "-"))}, tc.opts...)
		h := mwtest.New(t, c, []middleware.Rule{tc.rule}, opts...)(ok)
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
	h := mwtest.New(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "batch", Algorithm: algorithms.TokenBucket{Capacity: 10, Rate: 1, Period: time.Second}}, Identity: keyfunc.IP(), Cost: cost}}, clock(),
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
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `rule "batch": ratelimit: negative request cost: -3`) {
		t.Errorf("errors reported: %v, want one for the negative cost, naming the rule", errs)
	}
}

func TestIETFHeadersAndCustomDenyHandler(t *testing.T) {
	_, c := redistest.Mini(t)
	var denied limiter.Decision
	h := mwtest.New(t, c, []middleware.Rule{
		perIP(2),
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: keyfunc.Constant("all")},
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

func TestInvalidMiddlewareConfiguration(t *testing.T) {
	_, c := redistest.Mini(t)
	for _, tc := range []struct {
		name  string
		rdb   redis.Scripter
		rules []middleware.Rule
		opts  []middleware.Option
		want  string
	}{
		{"no key", c, []middleware.Rule{{Rule: limiter.Rule{Name: "a", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}}}, nil, `rule "a": no Identity function`},
		{"bad algorithm", c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.SlidingLog{Limit: 0, Window: time.Second}}, Identity: keyfunc.IP()}}, nil, `rule "per-ip"`},
		{"bad status", c, []middleware.Rule{perIP(1)}, []middleware.Option{middleware.WithKeyErrorStatus(200)}, "status"},
		{"no concurrency retry", c, []middleware.Rule{perIP(1)}, []middleware.Option{middleware.WithConcurrencyRetryAfter(0)}, "concurrency retry"},
		{"nil option", c, []middleware.Rule{perIP(1)}, []middleware.Option{nil}, "nil Option"},
		{"no rules", c, nil, nil, "no rules"},
		{"no client", nil, []middleware.Rule{perIP(1)}, nil, "nil Redis client"},
		{"duplicate", c, []middleware.Rule{perIP(1), perIP(2)}, nil, "duplicate"},
	} {
		_, err := middleware.New(tc.rdb, tc.rules, tc.opts...)
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrConfig mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := mwtest.Build(c, []middleware.Rule{perIP(1)}, redisstore.WithTimeout(-1)); !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("bad timeout: got %v, want ErrConfig mentioning the timeout", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("LimitByIP did not panic on an invalid limit")
		}
	}()
	middleware.LimitByIP(c, 0, time.Minute)
}

// NewWithLimiter takes a limiter that has each of the middleware's rules,
// as guard.Limits gives them; anything else is an ErrConfig naming the
// rule, at construction.
func TestNewWithLimiterChecksTheRules(t *testing.T) {
	rules := []middleware.Rule{perIP(1), {Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}, Identity: keyfunc.Header("X-API-Key")}}
	newLimiter := func(rules []limiter.Rule) *limiter.Limiter {
		lim, err := limiter.New(memstore.Must(), rules)
		if err != nil {
			t.Fatal(err)
		}
		return lim
	}
	other := guard.Limits(rules)
	other[1].Algorithm = algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 1}
	blockable := guard.Limits(rules)
	blockable[0].Blockable = true
	more := append(guard.Limits(rules), limiter.Rule{Name: "extra", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}})
	for _, tc := range []struct {
		name  string
		lim   *limiter.Limiter
		want  string            // "" for no error
		rules []middleware.Rule // nil: rules
	}{
		{"its rules", newLimiter(guard.Limits(rules)), "", nil},
		{"more rules", newLimiter(more), "", nil},
		{"a rule missing", newLimiter(guard.Limits(rules[:1])), `rule "per-key": the limiter has no rule of that name`, nil},
		{"another algorithm", newLimiter(other), `rule "per-key": the limiter's rule of that name differs (limiter: {Name:per-key Algorithm:GCRA(2 per 1s`, nil},
		{"not blockable", newLimiter(blockable), `rule "per-ip": the limiter's rule of that name differs (limiter: {Name:per-ip Algorithm:FixedWindow(1 per 1m0s) Blockable:true`, nil},
		{"no limiter", nil, "nil limiter", nil},
		{"two rules of one name", newLimiter(guard.Limits(rules)), `rule "per-ip": two rules of that name`, append(slices.Clone(rules), perIP(1))},
	} {
		given := tc.rules
		if given == nil {
			given = rules
		}
		_, err := middleware.NewWithLimiter(tc.lim, given)
		if got := err != nil; got != (tc.want != "") || (err != nil && (!errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestInProcessStore(t *testing.T) {
	h := mwtest.New(t, memstore.Must(), []middleware.Rule{perIP(1)}, clock())(ok)
	for i, want := range []int{200, 429} {
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != want || res.Header.Get("Retry-After") != map[int]string{200: "", 429: "60"}[want] {
			t.Errorf("request %d: %d %v, want %d", i, res.StatusCode, res.Header, want)
		}
	}
}

// The one-line form: n per window per client IP.
func TestLimitByIP(t *testing.T) {
	srv, c := redistest.Mini(t)
	srv.SetTime(mwtest.Epoch)
	h := middleware.LimitByIP(c, 2, time.Minute)(ok)
	for i, want := range []struct {
		status           int
		remaining, retry string
	}{{200, "1", ""}, {200, "0", ""}, {429, "0", "61"}} { // the sliding window frees a unit 1 µs into the next window
		res := do(h, "GET", "/", "203.0.113.9:1")
		if got := (struct {
			status           int
			remaining, retry string
		}{res.StatusCode, res.Header.Get("X-RateLimit-Remaining"), res.Header.Get("Retry-After")}); got != want {
			t.Errorf("request %d: got %+v, want %+v", i, got, want)
		}
	}
	if res := do(h, "GET", "/", "198.51.100.1:1"); res.StatusCode != 200 {
		t.Errorf("another IP: %d", res.StatusCode)
	}
	defer func() {
		if recover() == nil {
			t.Error("LimitByIP accepted a limit of 0")
		}
	}()
	middleware.LimitByIP(c, 0, time.Minute)
}

// One-liners of different limits keep separate counts: 6 requests to /b
// (100 a minute) leave /a (5 a minute) untouched (under one rule name,
// /b's requests would fill /a's limit). Middlewares that name one rule
// share what their keys share, on one Redis client or two: a per-ip
// sliding window of 5 a minute and one of 100 (a reload, or another
// instance's limit) count together, a fixed window of that name counts
// apart.
func TestSeparateLimitsDoNotShareCounters(t *testing.T) {
	srv, c := redistest.Mini(t)
	srv.SetTime(mwtest.Epoch)
	a := middleware.LimitByIP(c, 5, time.Minute)(ok)
	b := middleware.LimitByIP(c, 100, time.Minute)(ok)
	for range 6 {
		do(b, "GET", "/b", "203.0.113.9:1")
	}
	if res := do(a, "GET", "/a", "203.0.113.9:1"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Errorf("/a after 6 requests to /b: %d, %s remaining, want 200 and 4", res.StatusCode, res.Header.Get("X-RateLimit-Remaining"))
	}

	rule := func(alg algorithms.Algorithm) []middleware.Rule {
		return []middleware.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: alg}, Identity: keyfunc.IP()}}
	}
	other := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = other.Close() })
	small := mwtest.New(t, c, rule(algorithms.SlidingWindow{Limit: 5, Window: time.Minute}))(ok)
	for range 3 {
		do(small, "GET", "/", "198.51.100.7:1")
	}
	for _, tc := range []struct {
		name string
		mw   func(http.Handler) http.Handler
		want string // X-RateLimit-Remaining after one more request, counting the earlier cases'
	}{
		{"per-ip of 100 on the same client", mwtest.New(t, c, rule(algorithms.SlidingWindow{Limit: 100, Window: time.Minute})), "96"},
		{"per-ip of 100 on another client", mwtest.New(t, other, rule(algorithms.SlidingWindow{Limit: 100, Window: time.Minute})), "95"},
		{"a fixed window on the same client", mwtest.New(t, c, rule(algorithms.FixedWindow{Limit: 5, Window: time.Minute})), "4"},
		{"a fixed window on another client", mwtest.New(t, other, rule(algorithms.FixedWindow{Limit: 5, Window: time.Minute})), "3"},
		{"under another prefix", mwtest.New(t, c, rule(algorithms.SlidingWindow{Limit: 100, Window: time.Minute}), limiter.WithPrefix("other")), "99"},
	} {
		if got := do(tc.mw(ok), "GET", "/", "198.51.100.7:1").Header.Get("X-RateLimit-Remaining"); got != tc.want {
			t.Errorf("%s: %s remaining, want %s", tc.name, got, tc.want)
		}
	}
}

// A dead Redis with FailClosed answers 503 with Retry-After under the
// configured name; a custom deny handler finds Retry-After already set.
func TestRetryAfterNamesAndCustomDenyHandler(t *testing.T) {
	names := headers.Names{Remaining: "Quota-Left", RetryAfter: "X-Retry-In"}
	srv, c := redistest.Mini(t)
	closed := mwtest.New(t, c, []middleware.Rule{perIP(1)}, middleware.WithHeaders(names),
		middleware.WithFailClosed(), middleware.WithErrorHandler(func(*http.Request, error) {}))(ok)
	custom := mwtest.New(t, c, []middleware.Rule{perIP(1)}, clock(), middleware.WithHeaders(names),
		limiter.WithPrefix("custom"),
		middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d limiter.Decision) {
			w.WriteHeader(http.StatusTeapot)
		}))(ok)
	do(custom, "GET", "/", "203.0.113.9:1")
	res := do(custom, "GET", "/", "203.0.113.9:1")
	if res.StatusCode != http.StatusTeapot || res.Header.Get("X-Retry-In") != "60" || res.Header.Get("Quota-Left") != "0" {
		t.Errorf("custom deny handler: %d %v", res.StatusCode, res.Header)
	}
	srv.Close()
	res = do(closed, "GET", "/", "203.0.113.9:1", "Accept", "application/json")
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("X-Retry-In") != "1" || res.Header.Get("Retry-After") != "" {
		t.Errorf("fail closed: %d %v, want 503 with X-Retry-In: 1 only", res.StatusCode, res.Header)
	}
	// No policy was violated: the body names none.
	var p map[string]any
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil || res.Header.Get("Content-Type") != "application/problem+json" ||
		p["type"] != "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity" || p["status"] != 503.0 || p["retry_after"] != 1.0 {
		t.Errorf("fail closed problem: %v %v", p, err)
	}
	if v, listed := p["violated-policies"]; listed {
		t.Errorf("fail closed problem lists violated-policies %v, want none", v)
	}
}

// A decision the fallback store made after a Redis failure reaches the hook
// with both the decision and the error.
func TestFallbackEvent(t *testing.T) {
	srv, c := redistest.Mini(t)
	var events []guard.Event
	var errs []error
	h := mwtest.New(t, c, []middleware.Rule{perIP(3)},
		limiter.WithFallback(memstore.Must()), limiter.WithRetryInterval(time.Minute),
		middleware.WithHook(func(e guard.Event) { events = append(events, e) }),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))(ok)
	srv.Close()
	for i, want := range []int{200, 200, 200, 429} { // 3 failures mark Redis down; the fallback allows 3
		if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != want {
			t.Errorf("request %d: %d, want %d", i, res.StatusCode, want)
		}
	}
	if len(events) != 4 || !errors.Is(events[0].Err, limiter.ErrBackend) || !events[0].Decision.Fallback || !events[0].Decision.Allowed ||
		events[3].Err != nil || !events[3].Decision.Fallback || events[3].Decision.Allowed {
		t.Errorf("events: %+v", events)
	}
	if len(errs) != 3 || !errors.Is(errs[2], limiter.ErrBackend) {
		t.Errorf("errors: %v, want the 3 Redis failures", errs)
	}
}

func TestNilRedisClient(t *testing.T) {
	var rdb *redis.Client
	if _, err := middleware.New(rdb, []middleware.Rule{perIP(1)}); !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), "nil Redis client") {
		t.Errorf("got %v, want ErrConfig naming the nil client", err)
	}
}

// The default error handler logs a request without an identity at Warn
// and Redis failures at Error, without the raw path.
func TestDefaultErrorLogLevels(t *testing.T) {
	rec := logtest.Capture(t)
	srv, c := redistest.Mini(t)
	h := mwtest.New(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}, Identity: keyfunc.Header("X-API-Key")}})(ok)
	do(h, "GET", "/users/alice", "203.0.113.9:1")
	srv.Close()
	for range 4 { // 3 failures, then Redis is marked down: not logged again
		do(h, "GET", "/users/alice", "203.0.113.9:1", "X-API-Key", "k")
	}
	var got []string
	for _, r := range rec.Records() {
		got = append(got, r.Level.String()+" "+r.Message)
	}
	// The three failures are one line (one cause a minute); the fourth
	// decision is skipped while Redis is marked down, and not logged.
	want := []string{"WARN rate limit: request without an identity rejected", "ERROR rate limit decision failed",
		"ERROR rate limit backend down"}
	if !slices.Equal(got, want) {
		t.Fatalf("logged %q, want %q", got, want)
	}
	for _, r := range rec.Records() {
		r.Attrs(func(a slog.Attr) bool {
			if strings.Contains(a.Value.String(), "alice") {
				t.Errorf("log attribute %s carries the raw path: %s", a.Key, a.Value)
			}
			return true
		})
	}
}

// A context value of the wrong type (an authentication middleware that
// stores a numeric user ID, a key function that wants a string) is logged
// at Warn: the rule, and the type found, not the value. A key function's
// own error, not an ErrNoKey, is a request without an identity too.
func TestKeyFunctionFailuresAreLogged(t *testing.T) {
	type userKey struct{}
	type userID int64
	rec := logtest.Capture(t)
	_, c := redistest.Mini(t)
	var events []guard.Event
	h := mwtest.New(t, c, []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-user", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}, Identity: keyfunc.Context(userKey{})},
		{Rule: limiter.Rule{Name: "per-token", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}, Identity: func(*http.Request) (string, error) { return "", errors.New("token expired") },
			Skip: func(r *http.Request) bool { return r.URL.Path != "/token" }},
	}, middleware.WithHook(func(e guard.Event) { events = append(events, e) }))(ok)
	for _, path := range []string{"/", "/token"} {
		r := httptest.NewRequest("GET", path, nil)
		r = r.WithContext(context.WithValue(r.Context(), userKey{}, userID(987654321)))
		if path == "/token" {
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, "alice"))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", path, w.Code)
		}
	}
	type line struct{ level, msg, rule, err string }
	var got []line
	for _, r := range rec.Records() {
		attrs := logtest.Attrs(r)
		for key, v := range attrs {
			if strings.Contains(v.String(), "987654321") {
				t.Errorf("log attribute %s carries the context value: %s", key, v)
			}
		}
		l := line{level: r.Level.String(), msg: r.Message, rule: attrs["rule"].String(), err: attrs["error"].String()}
		got = append(got, l)
	}
	want := []line{
		{"WARN", "rate limit: request without an identity rejected", "per-user",
			`rule "per-user": ratelimit: request has no key: context key middleware_test.userKey: a value of type middleware_test.userID, not a string or fmt.Stringer`},
		{"WARN", "rate limit: request without an identity rejected", "per-token", `rule "per-token": ratelimit: request has no key: token expired`},
	}
	if !slices.Equal(got, want) {
		t.Errorf("logged %+v, want %+v", got, want)
	}
	if len(events) != 2 || !errors.Is(events[1].Err, keyfunc.ErrNoKey) || !slices.Equal(events[1].Rules, []string{"per-token"}) {
		t.Errorf("events %+v, want the second a per-token ErrNoKey", events)
	}
}

// An outer middleware (2 a minute) around an inner one (100 a minute): the
// response describes both, and the headers say the outer is the one about
// to refuse.
func TestNestedLimiters(t *testing.T) {
	_, c := redistest.Mini(t)
	rule := func(name string, limit int) middleware.Rule {
		return middleware.Rule{Rule: limiter.Rule{Name: name, Algorithm: algorithms.FixedWindow{Limit: limit, Window: time.Minute}}, Identity: keyfunc.IP()}
	}
	outer := mwtest.New(t, c, []middleware.Rule{rule("outer", 2)}, clock(), middleware.WithHeaders(headers.Both))
	inner := mwtest.New(t, c, []middleware.Rule{rule("inner", 100)}, clock(), middleware.WithHeaders(headers.Both))
	h := outer(inner(ok))
	do(h, "GET", "/", "203.0.113.9:1")
	res := do(h, "GET", "/", "203.0.113.9:1")
	for name, want := range map[string]string{
		"X-RateLimit-Limit":     "2",
		"X-RateLimit-Remaining": "0",
		"RateLimit-Policy":      `"outer";q=2;w=60, "inner";q=100;w=60`,
		"RateLimit":             `"outer";r=0;t=60, "inner";r=98;t=60`,
	} {
		if got := res.Header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" {
		t.Errorf("third request: %d %v, want 429 from the outer limiter", res.StatusCode, res.Header)
	}
}

// A limit per request: the plan comes from the API key; the headers report
// the limit that applied; an invalid plan is a 500 reported to the error
// handler.
func TestPlans(t *testing.T) {
	_, c := redistest.Mini(t)
	free := algorithms.FixedWindow{Limit: 2, Window: time.Minute}
	paid := algorithms.FixedWindow{Limit: 5, Window: time.Minute}
	var errs []error
	h := mwtest.New(t, c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: free}, Identity: keyfunc.Header("X-API-Key"),
		Plan: func(r *http.Request) algorithms.Algorithm {
			switch r.Header.Get("X-API-Key") {
			case "paid":
				return paid
			case "broken":
				return algorithms.FixedWindow{}
			case "unlisted": // a plan read from a map of pointers
				return map[string]*algorithms.FixedWindow{}["gold"]
			}
			return nil // the rule's Algorithm
		}}}, clock(), middleware.WithHeaders(headers.Both),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))(ok)
	count := func(key string) (admitted int, limit, policy string) {
		for range 6 {
			res := do(h, "GET", "/", "203.0.113.9:1", "X-API-Key", key)
			if res.StatusCode == 200 {
				admitted++
			}
			limit, policy = res.Header.Get("X-RateLimit-Limit"), res.Header.Get("RateLimit-Policy")
		}
		return admitted, limit, policy
	}
	if n, limit, policy := count("free"); n != 2 || limit != "2" || policy != `"per-key";q=2;w=60` {
		t.Errorf("free: %d admitted, limit %q, policy %q", n, limit, policy)
	}
	if n, limit, policy := count("paid"); n != 5 || limit != "5" || policy != `"per-key";q=5;w=60` {
		t.Errorf("paid: %d admitted, limit %q, policy %q", n, limit, policy)
	}
	for i, key := range []string{"broken", "unlisted"} {
		if res := do(h, "GET", "/", "203.0.113.9:1", "X-API-Key", key); res.StatusCode != 500 || len(errs) != i+1 || !errors.Is(errs[i], limiter.ErrCheck) {
			t.Errorf("invalid plan %q: %d, errors %v", key, res.StatusCode, errs)
		}
	}
}
