package rls_test

import (
	"math"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

const replacesConfig = `
domain: edge
descriptors:
  - key: user
    rate_limit: {unit: day, requests_per_unit: 1, name: general}
  - key: vip
    rate_limit: {unit: day, requests_per_unit: 3, replaces: [{name: general}]}
  - key: free
    rate_limit: {unlimited: true, replaces: [{name: general}]}
`

// TestReplaces: a limit named in a matched limit's replaces is not
// applied (its descriptor is OK with no limit), whether the replacing
// limit is counted or unlimited; the rest of the request is still
// decided all-or-nothing.
func TestReplaces(t *testing.T) {
	c := serve(t, miniBackend(t), replacesConfig, rls.Options{})
	same(t, "general alone", summary(ask(t, c, desc("user", "u"))), []any{ok, ok, uint32(0)})
	same(t, "general spent", summary(ask(t, c, desc("user", "u"))), []any{over, over, uint32(0)})
	for i := range 3 {
		res := ask(t, c, desc("user", "u"), desc("vip", "v"))
		same(t, "replaced by vip", summary(res), []any{ok, ok, uint32(0), ok, uint32(2 - i)})
		if res.Statuses[0].CurrentLimit != nil {
			t.Fatalf("the replaced descriptor reports a limit: %v", res.Statuses[0])
		}
	}
	same(t, "vip spent", summary(ask(t, c, desc("user", "u"), desc("vip", "v"))), []any{over, ok, uint32(0), over, uint32(0)})
	res := ask(t, c, desc("free", "f"), desc("user", "u"))
	same(t, "replaced by an unlimited limit", summary(res), []any{ok, ok, uint32(math.MaxUint32), ok, uint32(0)})
	if res.Statuses[1].CurrentLimit != nil {
		t.Errorf("the replaced descriptor reports a limit: %v", res.Statuses[1])
	}
}
