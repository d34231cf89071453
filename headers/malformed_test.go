package headers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// What an outer limiter wrote that is not a member of a Structured Field
// list (an older draft's dictionary, an unterminated string, a parameter
// without a key) is dropped when the lists are merged: kept, it would
// make the whole field unparsable, this limiter's members with it.
// Well-formed members of any item type are kept.
func TestWriteDropsMalformedOuterMembers(t *testing.T) {
	perIP := result("per-ip", 100, time.Minute, algorithms.Result{Allowed: true, Remaining: 42, NextAfter: 17 * time.Second})
	for _, tc := range []struct{ outer, want string }{
		{`limit=100, remaining=50, reset=5`, `"per-ip";r=42;t=17`},
		{`"outer";r=1;t=5, "unterminated`, `"outer";r=1;t=5, "per-ip";r=42;t=17`},
		{`"outer";r=1;=5, default;r=3, 7;r=1`, `default;r=3, 7;r=1, "per-ip";r=42;t=17`},
		{`"a";r=1 "b";r=2, "c";r=x y`, `"per-ip";r=42;t=17`},
		{`"esc\"aped";r=1;t=2, ("in" "ner");r=1`, `"esc\"aped";r=1;t=2, ("in" "ner");r=1, "per-ip";r=42;t=17`},
	} {
		h := http.Header{}
		h.Set("RateLimit", tc.outer)
		headers.IETF.Write(h, limiter.Decision{Allowed: true, At: now, Results: []limiter.RuleResult{perIP}})
		if got := h.Values("RateLimit"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("outer %q: RateLimit %q, want %q", tc.outer, got, tc.want)
		}
	}
}

// A list with no member is not sent (RFC 9651, 4.1.1): a decision of
// shadow rules alone, which are left out of the headers, leaves no empty
// RateLimit or RateLimit-Policy field behind, and outer members that
// were all dropped take their field with them.
func TestWriteSendsNoEmptyList(t *testing.T) {
	shadow := result("new-limit", 10, time.Minute, algorithms.Result{Allowed: true, Remaining: 9, NextAfter: time.Minute})
	shadow.Shadow = true
	for _, outer := range []string{"", "limit=100, remaining=50"} {
		h := http.Header{}
		if outer != "" {
			h.Set("RateLimit", outer)
		}
		headers.IETF.Write(h, limiter.Decision{Allowed: true, At: now, Results: []limiter.RuleResult{shadow}})
		if len(h) != 0 {
			t.Errorf("outer %q: got fields %q, want none", outer, h)
		}
	}
}
