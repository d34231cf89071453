package memstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestBucketOutlivesAClockStepBack: a bucket's level drains from its last
// update, which a clock that stepped back finds in the future; the state
// must live until the level has drained from there, not from now. Half a
// bucket of 10 an hour spent, then the clock steps back an hour and one
// more unit is admitted: 6 units in use until an hour ahead, then 36
// minutes of draining. Twenty minutes later on the stepped clock, 4 are
// left, on the Lua scripts (whose key must live 96 minutes) as in the Go
// model, which forgot the state once 36 minutes had passed and admitted 10.
func TestBucketOutlivesAClockStepBack(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0 := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	for _, b := range []struct {
		alg    algorithms.Algorithm
		suffix string
	}{
		{algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: time.Hour}, "tb"},
		{algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: time.Hour}, "lb"},
	} {
		alg := b.alg
		now := t0
		clock := limiter.WithClock(func() time.Time { return now })
		name := fmt.Sprintf("stepback%d", runs.Add(1))
		rules := []limiter.Rule{{Name: "r", Algorithm: alg}}
		lua, err := limiter.New(mwtest.RedisStore(t, s.Client), rules, clock, limiter.WithPrefix(name), limiter.WithDenyCache(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		model, err := limiter.New(memstore.Must(), rules, clock, limiter.WithPrefix(name))
		if err != nil {
			t.Fatal(err)
		}
		admit := func(cost int) (int, int) {
			t.Helper()
			n := [2]int{}
			for i, lim := range []*limiter.Limiter{lua, model} {
				for range cost {
					d, err := lim.Decide(ctx, limiter.Check{Rule: "r", Identity: "x", Cost: 1})
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						n[i]++
					}
				}
			}
			return n[0], n[1]
		}
		admit(5)
		now = t0.Add(-time.Hour) // the clock steps back
		admit(1)
		if ttl := s.Client.PTTL(ctx, name+":{r:x}:"+b.suffix).Val(); ttl < 95*time.Minute {
			t.Errorf("%v: the key lives %v, want 96m: 1h until its last update, 36m of draining", alg, ttl)
		}
		now = t0.Add(-20 * time.Minute)
		if gotLua, gotModel := admit(10); gotLua != 4 || gotModel != 4 {
			t.Errorf("%v: 20 minutes after a step back: %d admitted on Lua, %d on the model, want 4", alg, gotLua, gotModel)
		}
	}
}
