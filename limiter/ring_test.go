package limiter_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestRing decides on a go-redis Ring of two real servers. A Ring runs a
// script on its first key's shard, so a stack must be split by hash tag:
// otherwise a rule's state would be written on another rule's shard, and a
// later check of that rule alone would not find it.
func TestRing(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}})
	t.Cleanup(func() { ring.Close() })

	t.Run("step tables", func(t *testing.T) {
		for _, tc := range tables {
			runTable(t, ring, bases[0], tc.alg, tc.steps)
		}
	})

	rules := append(ruletest.Six(10), limiter.Rule{Name: "gate", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}})
	stack, err := ruletest.Build(ring, rules, fixedClock(bases[0]), limiter.WithPrefix("ring"), exactnessTimeout)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false, false} {
		if d, err := stack.Decide(ctx, ruletest.Checks(rules, "u", 1)...); err != nil || d.Allowed != want {
			t.Fatalf("stack %d: %+v %v, want allowed=%v", i, d, err, want)
		}
	}
	// Each rule alone, through the same Ring, sees the two admitted stacks
	// and none of the denied ones.
	for _, r := range rules[:6] {
		alone, err := ruletest.Build(ring, []limiter.Rule{r}, fixedClock(bases[0]), limiter.WithPrefix("ring"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := alone.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "u", Cost: 0})
		if err != nil || d.Results[0].Remaining != 8 {
			t.Errorf("rule %s alone: %+v %v, want 8 remaining", r.Name, d, err)
		}
	}
	if n := a.Client.DBSize(ctx).Val() + b.Client.DBSize(ctx).Val(); n == 0 {
		t.Error("no keys on the ring's servers")
	}
	if a.Client.DBSize(ctx).Val() == 0 || b.Client.DBSize(ctx).Val() == 0 {
		t.Logf("all keys on one shard (a %d, b %d): the split was not exercised", a.Client.DBSize(ctx).Val(), b.Client.DBSize(ctx).Val())
	}
}
