package headers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

var now = time.Unix(1_800_000_000, 250_000_000)

func result(rule string, quota int, window time.Duration, r algorithms.Result) limiter.RuleResult {
	return limiter.RuleResult{Rule: rule, Policy: algorithms.Policy{Quota: quota, Window: window}, Result: r}
}

func TestWrite(t *testing.T) {
	perIP := result("per-ip", 100, time.Minute, algorithms.Result{Allowed: true, Remaining: 42, ResetAfter: 16*time.Second + time.Millisecond, NextAfter: 16*time.Second + time.Millisecond})
	global := result("global", 10000, time.Minute, algorithms.Result{Allowed: true, Remaining: 9000, ResetAfter: time.Minute, NextAfter: time.Minute})
	userDenied := result("per-user", 10, 1500*time.Millisecond, algorithms.Result{Remaining: 0, RetryAfter: 1200 * time.Millisecond, ResetAfter: 1500 * time.Millisecond})
	impossible := result("per-user", 10, 1500*time.Millisecond, algorithms.Result{RetryAfter: algorithms.Never, ResetAfter: 1500 * time.Millisecond})
	slowDenied := result("slow", 5, time.Hour, algorithms.Result{Remaining: 0, RetryAfter: 30 * time.Second, ResetAfter: time.Hour})
	notAsked := result("per-ip", 100, time.Minute, algorithms.Result{Allowed: true})
	notAsked.Undecided = true

	for _, tc := range []struct {
		name  string
		names headers.Names
		d     limiter.Decision
		want  map[string]string
	}{
		{"allowed: binding rule has least remaining", headers.Both, limiter.Decision{Allowed: true, Results: []limiter.RuleResult{global, perIP}}, map[string]string{
			"X-Ratelimit-Limit":     "100",
			"X-Ratelimit-Remaining": "42",
			"X-Ratelimit-Reset":     "1800000017",
			"Ratelimit-Policy":      `"global";q=10000;w=60, "per-ip";q=100;w=60`,
			"Ratelimit":             `"global";r=9000;t=60, "per-ip";r=42;t=17`,
		}},
		{"denied: the denying rule that frees up last", headers.XRateLimit, limiter.Decision{Results: []limiter.RuleResult{perIP, userDenied, slowDenied}}, map[string]string{
			"X-Ratelimit-Limit":     "5",
			"X-Ratelimit-Remaining": "0",
			"X-Ratelimit-Reset":     "1800003601",
			"Retry-After":           "30",
		}},
		{"retry after rounds up and is at least 1", headers.IETF, limiter.Decision{Results: []limiter.RuleResult{userDenied}}, map[string]string{
			"Ratelimit-Policy": `"per-user";q=10;w=2`,
			"Ratelimit":        `"per-user";r=0;t=2`,
			"Retry-After":      "2",
		}},
		{"a rule that was not asked has a policy and no state", headers.IETF, limiter.Decision{Results: []limiter.RuleResult{notAsked, userDenied}}, map[string]string{
			"Ratelimit-Policy": `"per-ip";q=100;w=60, "per-user";q=10;w=2`,
			"Ratelimit":        `"per-user";r=0;t=2`,
			"Retry-After":      "2",
		}},
		{"no retry-after for an impossible cost", headers.XRateLimit, limiter.Decision{Results: []limiter.RuleResult{impossible}}, map[string]string{
			"X-Ratelimit-Limit":     "10",
			"X-Ratelimit-Remaining": "0",
			"X-Ratelimit-Reset":     "1800000002",
		}},
		{"renamed and switched off", headers.Names{Remaining: "Quota-Left"}, limiter.Decision{Allowed: true, Results: []limiter.RuleResult{perIP}}, map[string]string{
			"Quota-Left": "42",
		}},
	} {
		h := http.Header{}
		h.Set("X-Ratelimit-Remaining", "stale value from an outer limiter")
		tc.d.At = now
		tc.names.Write(h, tc.d)
		if tc.names.Remaining != headers.XRateLimit.Remaining {
			h.Del("X-Ratelimit-Remaining")
		}
		if len(h) != len(tc.want) {
			t.Errorf("%s: got headers %v, want %v", tc.name, h, tc.want)
		}
		for k, want := range tc.want {
			if got := h.Values(k); len(got) != 1 || got[0] != want {
				t.Errorf("%s: %s = %q, want [%q]", tc.name, k, got, want)
			}
		}
	}
}

// Retry-After is whole seconds, rounded up, at least 1, and absent when
// the cost can never be admitted.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{{time.Millisecond, "1"}, {time.Second, "1"}, {time.Second + time.Nanosecond, "2"}, {59500 * time.Millisecond, "60"}, {algorithms.Never, ""}} {
		h := http.Header{}
		d := limiter.Decision{At: now, Results: []limiter.RuleResult{result("r", 1, time.Minute, algorithms.Result{RetryAfter: tc.wait})}}
		headers.XRateLimit.Write(h, d)
		if got := h.Get("Retry-After"); got != tc.want {
			t.Errorf("wait %v: Retry-After %q, want %q", tc.wait, got, tc.want)
		}
	}
}

// An inner limiter merges with what an outer one wrote: list members are
// kept (a member of the same name is replaced), X-RateLimit-* describes
// the most restrictive rule, Retry-After the longest wait.
func TestWriteMergesNestedLimiters(t *testing.T) {
	outer := result("outer", 2, time.Minute, algorithms.Result{Allowed: true, Remaining: 0, ResetAfter: time.Minute, NextAfter: time.Minute})
	inner := result("inner", 100, time.Minute, algorithms.Result{Allowed: true, Remaining: 98, ResetAfter: time.Minute, NextAfter: time.Minute})
	h := http.Header{}
	headers.Both.Write(h, limiter.Decision{Allowed: true, At: now, Results: []limiter.RuleResult{outer}})
	headers.Both.Write(h, limiter.Decision{Allowed: true, At: now, Results: []limiter.RuleResult{inner}})
	for name, want := range map[string]string{
		"X-Ratelimit-Limit":     "2",
		"X-Ratelimit-Remaining": "0",
		"Ratelimit-Policy":      `"outer";q=2;w=60, "inner";q=100;w=60`,
		"Ratelimit":             `"outer";r=0;t=60, "inner";r=98;t=60`,
	} {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// The same rule name again (a route mounted twice): replaced, never
	// duplicated; a denial describes itself and keeps the longest wait.
	h.Set("Retry-After", "90")
	again := result("inner", 100, time.Minute, algorithms.Result{Remaining: 0, RetryAfter: 30 * time.Second, ResetAfter: time.Minute})
	headers.Both.Write(h, limiter.Decision{At: now, Results: []limiter.RuleResult{again}})
	for name, want := range map[string]string{
		"X-Ratelimit-Limit": "100",
		"Retry-After":       "90",
		"Ratelimit":         `"outer";r=0;t=60, "inner";r=0;t=30`, // a denial's t is its wait
	} {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("after a second inner decision: %s = %q, want %q", name, got, want)
		}
	}
}

// The draft's parameter names can be renamed, should the draft rename them.
func TestRenamedParameters(t *testing.T) {
	h := http.Header{}
	names := headers.IETF
	names.RemainingParam, names.ResetParam, names.QuotaParam, names.WindowParam = "remaining", "reset", "quota", "window"
	r := result("api", 10, time.Minute, algorithms.Result{Allowed: true, Remaining: 4, NextAfter: 6 * time.Second})
	names.Write(h, limiter.Decision{Allowed: true, At: now, Results: []limiter.RuleResult{r}})
	if got, want := h.Get("RateLimit"), `"api";remaining=4;reset=6`; got != want {
		t.Errorf("RateLimit = %q, want %q", got, want)
	}
	if got, want := h.Get("RateLimit-Policy"), `"api";quota=10;window=60`; got != want {
		t.Errorf("RateLimit-Policy = %q, want %q", got, want)
	}
}

// Write sets each field as http.Header.Set would, under its canonical name,
// and a field added to afterwards does not change another.
func TestWriteSetsFieldsApart(t *testing.T) {
	perIP := result("per-ip", 100, time.Minute, algorithms.Result{Allowed: true, Remaining: 42, ResetAfter: time.Minute})
	names := headers.Names{Limit: "x-limit", Remaining: "X-Remaining", Reset: "X-Reset"}
	h := http.Header{}
	names.Write(h, limiter.Decision{Allowed: true, At: now, Results: []limiter.RuleResult{perIP}})
	h.Add("X-Limit", "again")
	h.Add("X-Remaining", "again")
	for name, want := range map[string][]string{"X-Limit": {"100", "again"}, "X-Remaining": {"42", "again"}, "X-Reset": {"1800000061"}} {
		if got := h.Values(name); len(got) != len(want) || got[0] != want[0] || (len(want) > 1 && got[1] != want[1]) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if len(h) != 3 {
		t.Errorf("fields %v, want 3", h)
	}
}
