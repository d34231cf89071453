package rls_test

import (
	"testing"
	"time"

	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// requests_per_unit 0 refuses every request with hits, as the reference
// answers it, all or nothing: the request's other descriptors consume
// nothing. Hits of 0 are OK with nothing remaining; under shadow_mode it
// refuses nothing; a limit override of 0 refuses as the limit does.
func TestRequestsPerUnitZero(t *testing.T) {
	const config = `
domain: edge
descriptors:
  - key: banned
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: watched
    shadow_mode: true
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 3}
`
	c, err := rls.Parse("test.yaml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	if rules := rls.Limits(c); len(rules) != 2 { // remote_address and the override rule
		t.Fatalf("limiter rules %v, want remote_address's and the override rule only", rules)
	}
	eachBackend(t, func(t *testing.T, b backend) {
		s := serve(t, b, config, rls.Options{})
		res := ask(t, s, desc("banned", "x"))
		same(t, "banned", summary(res), []any{over, over, uint32(0)})
		wantLimit(t, "banned", res.Statuses[0], "", 0, 1 /* SECOND */, 0)
		if got := refused(t, res); len(got) != 1 {
			t.Errorf("refused by %v, want the banned rule", got)
		}

		res = ask(t, s, desc("remote_address", "a"), desc("banned", "x"))
		same(t, "with another descriptor", summary(res), []any{over, ok, uint32(0), over, uint32(0)})
		if d := res.Statuses[0].DurationUntilReset; d != nil {
			t.Errorf("the descriptor not asked has duration_until_reset %v, want none", d)
		}
		same(t, "the other consumed nothing", summary(ask(t, s, desc("remote_address", "a"))), []any{ok, ok, uint32(2)})

		same(t, "no hits", summary(ask(t, s, hits(desc("banned", "x"), 0))), []any{ok, ok, uint32(0)})

		res = ask(t, s, desc("remote_address", "a"), desc("watched", "x"))
		same(t, "shadow_mode", summary(res), []any{ok, ok, uint32(1), over, uint32(0)})

		res = ask(t, s, limited(desc("remote_address", "b"), 0, typev3.RateLimitUnit_MINUTE, 0))
		same(t, "an override of 0", summary(res), []any{over, over, uint32(0)})
		same(t, "the configured limit untouched", summary(ask(t, s, desc("remote_address", "b"))), []any{ok, ok, uint32(2)})
		same(t, "an override on a limit of 0", summary(ask(t, s, limited(desc("banned", "y"), 1, typev3.RateLimitUnit_MINUTE, 0))), []any{ok, ok, uint32(0)})
	})
}

// TestZeroOverrideOnLeasedLimit: a limit override of 0 on a leased limit
// refuses without the limiter, as a limit of 0 does, and reports the end
// of its window as duration_until_reset and RateLimit-Reset, not 0 s (no
// pool decided it, so there is no pool's figure to report).
func TestZeroOverrideOnLeasedLimit(t *testing.T) {
	s := serve(t, miniBackend(t), "domain: edge\ndescriptors:\n  - key: global\n    rate_limit: {unit: hour, requests_per_unit: 20, lease: 1s}\n", rls.Options{ResponseHeaders: true})
	res := ask(t, s, limited(desc("global", "g"), 0, typev3.RateLimitUnit_MINUTE, 0))
	same(t, "an override of 0", summary(res), []any{over, over, uint32(0)})
	if d := res.Statuses[0].GetDurationUntilReset().AsDuration(); d <= 0 || d > time.Minute {
		t.Errorf("duration_until_reset %v, want the time to the minute's end", d)
	}
	for _, h := range res.ResponseHeadersToAdd {
		if h.GetKey() == rls.DefaultResetHeader && h.GetValue() == "0" {
			t.Errorf("%s: 0, want the seconds to the minute's end", h.GetKey())
		}
	}
}
