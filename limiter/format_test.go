package limiter_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestFormatInWords: %v writes a decision's verdict and each rule's
// quota left, %+v adds the waits, and a rule's part reads the same alone.
func TestFormatInWords(t *testing.T) {
	d := limiter.Decision{Results: []limiter.RuleResult{
		{Rule: "per-ip", Policy: algorithms.Policy{Quota: 10, Window: time.Minute},
			Result: algorithms.Result{RetryAfter: 41 * time.Second, NextAfter: 41 * time.Second, ResetAfter: time.Minute}},
		{Rule: "global", Policy: algorithms.Policy{Quota: 1000, Window: time.Hour},
			Result: algorithms.Result{Allowed: true, Remaining: 990, NextAfter: time.Second, ResetAfter: time.Hour}},
		{Rule: "slots", Policy: algorithms.Policy{Quota: 4, Window: time.Minute, Unit: "concurrent-requests"},
			Result: algorithms.Result{Allowed: true, Remaining: 3}, Leased: 2},
		{Rule: "new", Policy: algorithms.Policy{Quota: 5, Window: time.Minute}, Shadow: true,
			Result: algorithms.Result{RetryAfter: algorithms.Never}},
		{Rule: "bans", Blocked: true, Result: algorithms.Result{RetryAfter: time.Hour}},
		{Rule: "later", Undecided: true, Result: algorithms.Result{Allowed: true}},
	}}
	for _, tc := range []struct{ format, want string }{
		{"%v", "denied (per-ip: refused, 0 left of 10/1m0s; global: 990 left of 1000/1h0m0s; slots: 3 left of 4 concurrent-requests; " +
			"new: shadow, would refuse, 0 left of 5/1m0s; bans: blocked, 0 left; later: undecided)"},
		{"%s", "denied (per-ip: refused, 0 left of 10/1m0s; global: 990 left of 1000/1h0m0s; slots: 3 left of 4 concurrent-requests; " +
			"new: shadow, would refuse, 0 left of 5/1m0s; bans: blocked, 0 left; later: undecided)"},
		{"%+v", "denied, retry after 1h0m0s (per-ip: refused, 0 left of 10/1m0s, retry after 41s, more in 41s, full again in 1m0s; " +
			"global: 990 left of 1000/1h0m0s, more in 1s, full again in 1h0m0s; slots: 3 left of 4 concurrent-requests, leased 2; " +
			"new: shadow, would refuse, 0 left of 5/1m0s, retry after never; bans: blocked, 0 left, retry after 1h0m0s; later: undecided)"},
	} {
		if got := fmt.Sprintf(tc.format, d); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.format, got, tc.want)
		}
	}
	r := d.Results[0]
	if got, want := fmt.Sprintf("%v", r), "per-ip: refused, 0 left of 10/1m0s"; got != want {
		t.Errorf("%%v of a RuleResult: %s, want %s", got, want)
	}
	if got, want := fmt.Sprintf("%+v", &r), "per-ip: refused, 0 left of 10/1m0s, retry after 41s, more in 41s, full again in 1m0s"; got != want {
		t.Errorf("%%+v of a *RuleResult: %s, want %s", got, want)
	}
	if got, want := fmt.Sprintf("%d", limiter.Decision{Allowed: true, Fallback: true}), "%!d(limiter.Decision=allowed, by the fallback store ())"; got != want {
		t.Errorf("%%d: %s, want %s", got, want)
	}
}

// TestFormatHidesInternals: a decided (and leased) check prints neither
// its identity nor what Settle keeps, with any verb.
func TestFormatHidesInternals(t *testing.T) {
	lim := newLimiter(t, memstore.Must(), []limiter.Rule{
		{Name: "per-user", Algorithm: algorithms.TokenBucket{Capacity: 100, Rate: 100, Period: time.Minute}, Lease: time.Second},
	})
	defer lim.Close()
	d, err := lim.Allow(ctx, "per-user", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		got := fmt.Sprintf(format, d)
		for _, internal := range []string{"alice", "lease:", "check:", "prefix", "settled", "Token"} {
			if strings.Contains(got, internal) {
				t.Errorf("%s prints %q: %s", format, internal, got)
			}
		}
		if !strings.HasPrefix(got, "allowed (per-user: ") {
			t.Errorf("%s: %s", format, got)
		}
	}
}
