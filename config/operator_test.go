package config_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// operatorRules has a rule of each key kind an operator reads: a hashed
// header with plans, an address, and a join with an alt_key; and a rule
// no stack uses.
const operatorRules = `rules:
  - name: per-key
    key: {header: X-API-Key}
    fixed_window: 20/1m
    blockable: true
    plans:
      header: X-Plan
      values:
        pro: {fixed_window: 100/1h}
  - name: per-ip
    key: ip
    fixed_window: 10/1m
  - name: login
    key: {join: [ip, {form: username}]}
    alt_key: ip
    fixed_window: 5/1m
  - name: unused
    key: ip
    fixed_window: 1/1m
stacks:
  - name: api
    rules: [per-key]
  - name: web
    rules: [per-ip]
  - name: login
    rules: [login]
`

// operatorLimits loads operatorRules on miniredis, and returns them with
// a function that serves a request through a stack and returns its
// status, and the function that stops the server.
func operatorLimits(t *testing.T) (*config.Limits, func(stack string, r *http.Request) int, func()) {
	t.Helper()
	m, rdb := redistest.Mini(t)
	s, err := redisstore.New(rdb)
	if err != nil {
		t.Fatal(err)
	}
	limits, _ := load(t, s, operatorRules)
	serve := func(stack string, r *http.Request) int {
		w := httptest.NewRecorder()
		limits.Middleware(stack)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
		return w.Code
	}
	return limits, serve, m.Close
}

// apiRequest is a request with API key k, under plan when not "".
func apiRequest(k, plan string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-API-Key", k)
	if plan != "" {
		r.Header.Set("X-Plan", plan)
	}
	return r
}

// statusLeft is what Status reports left for rule and identity under plan.
func statusLeft(t *testing.T, limits *config.Limits, rule, identity, plan string) (left, quota int) {
	t.Helper()
	d, err := limits.Status(context.Background(), rule, identity, plan)
	if err != nil {
		t.Fatalf("Status(%s, %s, %q): %v", rule, identity, plan, err)
	}
	return d.Results[0].Remaining, d.Results[0].Policy.Quota
}

// TestOperatorReachesRequestsState: Status, Reset, Block and Unblock by
// rule name and the raw API key reach the state requests with that key
// (hashed) consume, under the rule's algorithm and its plans'.
func TestOperatorReachesRequestsState(t *testing.T) {
	limits, serve, _ := operatorLimits(t)
	ctx := context.Background()
	if got := serve("api", apiRequest("k", "")); got != 200 {
		t.Fatalf("first request: %d", got)
	}
	if left, quota := statusLeft(t, limits, "per-key", "k", ""); left != 19 || quota != 20 {
		t.Errorf("after one request: %d left of %d, want 19 of 20", left, quota)
	}
	if got := serve("api", apiRequest("k", "pro")); got != 200 {
		t.Fatalf("request under pro: %d", got)
	}
	if left, quota := statusLeft(t, limits, "per-key", "k", "pro"); left != 99 || quota != 100 {
		t.Errorf("under pro: %d left of %d, want 99 of 100", left, quota)
	}
	if left, _ := statusLeft(t, limits, "per-key", "other", ""); left != 20 {
		t.Errorf("another key: %d left, want 20", left)
	}
	if err := limits.Reset(ctx, "per-key", "k"); err != nil {
		t.Fatal(err)
	}
	if left, _ := statusLeft(t, limits, "per-key", "k", ""); left != 20 {
		t.Errorf("after Reset: %d left, want 20", left)
	}
	if left, _ := statusLeft(t, limits, "per-key", "k", "pro"); left != 100 {
		t.Errorf("under pro after Reset: %d left, want 100", left)
	}
	if err := limits.Reset(ctx, "per-key", "k"); !errors.Is(err, limiter.ErrNotFound) {
		t.Errorf("a second Reset: %v, want ErrNotFound", err)
	}
	if err := limits.Block(ctx, "per-key", "k", time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := serve("api", apiRequest("k", "")); got != 429 {
		t.Errorf("blocked key's request: %d, want 429", got)
	}
	if d, err := limits.Status(ctx, "per-key", "k", ""); err != nil || !d.Results[0].Blocked {
		t.Errorf("Status of a blocked key: %+v, %v", d, err)
	}
	if err := limits.Unblock(ctx, "per-key", "k"); err != nil {
		t.Fatal(err)
	}
	if got := serve("api", apiRequest("k", "")); got != 200 {
		t.Errorf("after Unblock: %d, want 200", got)
	}
}

// TestOperatorReadsKeyKinds: an IPv6 address names its /64, a join's
// parts are separated by "|", and "alt_key:" names a client counted by
// the rule's alt_key.
func TestOperatorReadsKeyKinds(t *testing.T) {
	limits, serve, _ := operatorLimits(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "[2001:db8::2]:1234"
	serve("web", r)
	if left, _ := statusLeft(t, limits, "per-ip", "2001:db8::1", ""); left != 9 {
		t.Errorf("another address of the /64: %d left, want 9", left)
	}
	if left, _ := statusLeft(t, limits, "per-ip", "2001:db8:0:1::2", ""); left != 10 {
		t.Errorf("another /64: %d left, want 10", left)
	}
	login := func(form string) {
		r := httptest.NewRequest("POST", "/login", strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = "192.0.2.7:1234"
		serve("login", r)
	}
	login("username=a|b")
	login("password=x") // no username: counted by the alt_key, the address
	login("password=x")
	if left, _ := statusLeft(t, limits, "login", `192.0.2.7|a\|b`, ""); left != 4 {
		t.Errorf("join: %d left, want 4", left)
	}
	if left, _ := statusLeft(t, limits, "login", "alt_key:192.0.2.7", ""); left != 3 {
		t.Errorf("alt_key: %d left, want 3", left)
	}
}

// TestOperatorErrors: an unknown rule (or one no stack uses) names the
// rule and lists those in force; a missing identity, an unknown plan and
// an identity the key cannot read are invalid checks; a store failure is
// a backend error.
func TestOperatorErrors(t *testing.T) {
	limits, _, stop := operatorLimits(t)
	ctx := context.Background()
	for _, tc := range []struct {
		rule, identity, plan string
		want                 []string
	}{
		{"nope", "k", "", []string{`no rule "nope"`, "per-key, per-ip, login"}},
		{"unused", "k", "", []string{`no rule "unused"`}},
		{"per-key", "", "", []string{"no identity"}},
		{"per-key", "k", "gold", []string{`no plan "gold"`, "its plans: pro"}},
		{"per-ip", "k", "", []string{"not an IP address"}},
		{"login", "192.0.2.7", "", []string{"found 1 parts"}},
	} {
		_, err := limits.Status(ctx, tc.rule, tc.identity, tc.plan)
		if !errors.Is(err, limiter.ErrCheck) || !strings.HasPrefix(err.Error(), "ratelimit: ") {
			t.Errorf("Status(%q, %q, %q): %v, want an ErrCheck", tc.rule, tc.identity, tc.plan, err)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Status(%q, %q, %q): %v, want %q in it", tc.rule, tc.identity, tc.plan, err, want)
			}
		}
	}
	if err := limits.Reset(ctx, "nope", "k"); !errors.Is(err, limiter.ErrCheck) {
		t.Errorf("Reset of an unknown rule: %v", err)
	}
	stop()
	if err := limits.Reset(ctx, "per-key", "k"); !errors.Is(err, limiter.ErrBackend) {
		t.Errorf("Reset with the store down: %v, want ErrBackend", err)
	}
}

// TestOperatorErrorsQuoteNoIdentity: an identity a rule's key cannot read
// is an invalid check that says what the key wanted, never the value
// given: an operator who pastes an API key against the wrong rule (an
// address's, a constant's, a join's part) must not find it in the
// command's stderr or a log.
func TestOperatorErrorsQuoteNoIdentity(t *testing.T) {
	limits, _ := load(t, memstore.Must(), `rules:
  - name: per-ip
    key: ip
    fixed_window: 10/1m
  - name: global
    key: {constant: all}
    fixed_window: 10/1m
  - name: login
    key: {join: [ip, {form: username}]}
    fixed_window: 5/1m
stacks:
  - name: api
    rules: [per-ip, global, login]
`)
	const secret = "sk-live-5e6f7a8b"
	for _, tc := range []struct{ rule, identity, says string }{
		{"per-ip", secret, "not an IP address"},
		{"global", secret, `the identity is "all"`},
		{"login", secret + "|alice", "not an IP address"},
	} {
		_, err := limits.Status(context.Background(), tc.rule, tc.identity, "")
		if !errors.Is(err, limiter.ErrCheck) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Status(%s, %s): %v, want an ErrCheck saying %q", tc.rule, tc.identity, err, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("Status(%s): %v quotes the identity", tc.rule, err)
		}
	}
}
