package memstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestBlocksShorterThanAMicrosecond: a Penalty or a Block of less than a
// microsecond (the stores' unit) blocks as one of a microsecond does, on
// the Lua scripts as in the Go model: a denial reports Blocked on both,
// and Unblock finds the block on both.
func TestBlocksShorterThanAMicrosecond(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{500 * time.Nanosecond, time.Microsecond, 1500 * time.Nanosecond} {
		rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}, Penalty: d}}
		lua, mod, _, _ := luaAndModel(t, s.Client, &now, "submicro", rules)
		for i := range 3 {
			got, err := lua.Allow(ctx, "r", "x")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := mod.Allow(ctx, "r", "x")
			if shown(got) != shown(want) {
				t.Errorf("penalty %v, request %d:\nlua   %v\nmodel %v", d, i, shown(got), shown(want))
			}
			if i > 0 && !got.Results[0].Blocked {
				t.Errorf("penalty %v, request %d: a denial did not block", d, i)
			}
		}
		for _, lim := range []*limiter.Limiter{lua, mod} {
			if err := lim.Unblock(ctx, "r", "x"); err != nil {
				t.Errorf("penalty %v: Unblock: %v", d, err)
			}
		}
		var errs []string
		for _, lim := range []*limiter.Limiter{lua, mod} {
			if err := lim.Block(ctx, "r", "x", d); err != nil {
				t.Fatal(err)
			}
			errs = append(errs, fmt.Sprint(lim.Unblock(ctx, "r", "x")))
		}
		if errs[0] != "<nil>" || errs[1] != "<nil>" {
			t.Errorf("Block(%v) then Unblock: lua %s, model %s; want both to find the block", d, errs[0], errs[1])
		}
	}
}

// TestPeeksNeverBlock: a check of cost 0 (a peek, as Limiter.Status makes)
// writes nothing, a Penalty's block included, even when it is denied (a
// queue's peek is never denied): a
// client that used 3 units under a plan of 5 and is then looked at under a
// plan of 2 (an operator's status without the client's plan, or a limit
// lowered since) is not blocked, and its next request under its own plan
// is admitted, on the Lua scripts as in the Go model.
func TestPeeksNeverBlock(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	small := append(ruletest.Six(2), limiter.Rule{Name: "cc", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Hour}})
	big := append(ruletest.Six(5), limiter.Rule{Name: "cc", Algorithm: algorithms.Concurrency{Limit: 5, TTL: time.Hour}})
	for i, r := range small {
		r.Penalty = time.Hour
		lua, mod, _, _ := luaAndModel(t, s.Client, &now, "peek", []limiter.Rule{r})
		for j, lim := range []*limiter.Limiter{lua, mod} {
			store := []string{"lua", "model"}[j]
			plan := limiter.Check{Rule: r.Name, Identity: "x", Cost: 3, Plan: big[i].Algorithm}
			if d, err := lim.Decide(ctx, plan); err != nil || !d.Allowed {
				t.Fatalf("%v (%s): 3 under its plan of 5: %+v %v", r.Algorithm, store, d, err)
			}
			peek, err := lim.Status(ctx, r.Name, "x")
			if err != nil {
				t.Fatal(err)
			}
			if peek.Allowed || peek.Results[0].Blocked {
				t.Errorf("%v (%s): a peek under a limit of 2 after 3 used: allowed %v, blocked %v; want denied, not blocked", r.Algorithm, store, peek.Allowed, peek.Results[0].Blocked)
			}
			plan.Cost = 1
			if d, err := lim.Decide(ctx, plan); err != nil || !d.Allowed {
				t.Errorf("%v (%s): the 4th unit under its plan of 5, after a peek: %v, want admitted", r.Algorithm, store, shown(d))
			}
			if err := lim.Unblock(ctx, r.Name, "x"); !errors.Is(err, limiter.ErrNotFound) {
				t.Errorf("%v (%s): Unblock after a peek: %v, want ErrNotFound (no block)", r.Algorithm, store, err)
			}
		}
	}
}
