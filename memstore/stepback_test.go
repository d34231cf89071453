package memstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
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
	for _, alg := range []algorithms.Algorithm{
		algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: time.Hour},
		algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: time.Hour},
	} {
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
		if ttl := s.Client.PTTL(ctx, name+":{r:x}:"+ruletest.KeySuffix(alg)).Val(); ttl < 95*time.Minute {
			t.Errorf("%v: the key lives %v, want 96m: 1h until its last update, 36m of draining", alg, ttl)
		}
		now = t0.Add(-20 * time.Minute)
		if gotLua, gotModel := admit(10); gotLua != 4 || gotModel != 4 {
			t.Errorf("%v: 20 minutes after a step back: %d admitted on Lua, %d on the model, want 4", alg, gotLua, gotModel)
		}
	}
}

// TestBucketWaitsAfterAClockStepBack: after the clock stepped back, a
// full bucket's level drains only from its last update, ahead of now, so
// the waits it reports count from there: a request that waits its
// RetryAfter is admitted, and not a millisecond sooner, on the Lua scripts
// as in the Go model; ResetAfter runs until the bucket is empty. A plan
// of another capacity reads the level so too.
func TestBucketWaitsAfterAClockStepBack(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0 := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	tb := algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: time.Hour}
	lb := algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: time.Hour}
	for _, c := range []struct {
		rule, plan  algorithms.Algorithm
		wait, reset time.Duration // from t0
	}{
		{tb, tb, 6 * time.Minute, time.Hour},
		{lb, lb, 6 * time.Minute, time.Hour},
		{tb, algorithms.TokenBucket{Capacity: 5, Rate: 10, Period: time.Hour}, 36 * time.Minute, time.Hour},
	} {
		for _, back := range []time.Duration{time.Second, time.Hour} {
			now := t0
			rules := []limiter.Rule{{Name: "r", Algorithm: c.rule}}
			lua, model, _, _ := luaAndModel(t, s.Client, &now, "waits", rules)
			for i, lim := range []*limiter.Limiter{lua, model} {
				at := func(d time.Duration, plan algorithms.Algorithm, cost int) limiter.Decision {
					t.Helper()
					now = t0.Add(d)
					dec, err := lim.Decide(ctx, limiter.Check{Rule: "r", Identity: "x", Cost: cost, Plan: plan})
					if err != nil {
						t.Fatal(err)
					}
					return dec
				}
				store := []string{"lua", "model"}[i]
				at(0, nil, 10) // filled at t0
				d := at(-back, c.plan, 1)
				if d.Allowed {
					t.Fatalf("%v: admitted with the bucket full", c.plan)
				}
				wait, reset := d.RetryAfter(), d.Results[0].ResetAfter
				if wait != back+c.wait || reset != back+c.reset {
					t.Errorf("%v back %v (%s): RetryAfter %v, ResetAfter %v; want %v and %v", c.plan, back, store, wait, reset, back+c.wait, back+c.reset)
				}
				if at(-back+wait-time.Millisecond, c.plan, 1).Allowed || !at(-back+wait, c.plan, 1).Allowed {
					t.Errorf("%v back %v (%s): not admitted exactly RetryAfter %v later", c.plan, back, store, wait)
				}
			}
		}
	}
}

// TestNoGiveBackIntoAnotherPlansState: a bucket's or GCRA's give-back
// returns nothing into a state written under another plan, on the Lua
// scripts as in the Go model, also where no Ledger says that the plan
// changed: a decision under a plan of 1 an hour takes 5 units; its state
// is gone (expired, then dropped); the clock steps back 2 hours; the
// rule's own plan (10 a second) takes 1 unit, then, a second later, all
// 10; the first decision is settled at 0. The fresh state's 10 units are
// all in use, and none may come back.
func TestNoGiveBackIntoAnotherPlansState(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0 := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		rule, slow algorithms.Algorithm
	}{
		{algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 10}, algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 10}},
		{algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: time.Second}, algorithms.TokenBucket{Capacity: 10, Rate: 1, Period: time.Hour}},
		{algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: time.Second}, algorithms.LeakyBucket{Capacity: 10, Rate: 1, Period: time.Hour}},
	} {
		now := t0
		lua, model, _, key := luaAndModel(t, s.Client, &now, "plans", []limiter.Rule{{Name: "r", Algorithm: c.rule}})
		for i, lim := range []*limiter.Limiter{lua, model} {
			store := []string{"lua", "model"}[i]
			now = t0
			take := func(cost int, plan algorithms.Algorithm) limiter.Decision {
				t.Helper()
				d, err := lim.Decide(ctx, limiter.Check{Rule: "r", Identity: "x", Cost: cost, Plan: plan})
				if err != nil || !d.Allowed {
					t.Fatalf("%v (%s): cost %d: %+v %v", c.rule, store, cost, d, err)
				}
				return d
			}
			first := take(5, c.slow)
			now = t0.Add(6 * time.Hour) // the state has expired: the memstore drops it, the key goes
			if err := s.Client.Del(ctx, key).Err(); err != nil {
				t.Fatal(err)
			}
			if err := model.Reset(ctx, "r", "x"); !errors.Is(err, limiter.ErrNotFound) {
				t.Fatalf("%v: the model's expired state reset: %v", c.rule, err)
			}
			now = t0.Add(4 * time.Hour) // the clock steps back
			take(1, nil)
			now = now.Add(time.Second)
			take(10, nil)
			if _, err := lim.Settle(ctx, first, 0); err != nil {
				t.Fatal(err)
			}
			d, err := lim.Status(ctx, "r", "x")
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Results[0].Remaining; got != 0 {
				t.Errorf("%v (%s): %d left after the fresh state was used up and a decision under another plan was settled, want 0", c.rule, store, got)
			}
		}
	}
}

// TestNoGiveBackIntoAFreshState: a give-back returns nothing into a state
// written afresh after the decision's state was emptied, under the same
// plan too, on the Lua scripts as in the Go model: a decision takes 5
// units of a bucket, GCRA or queue of 10 an hour; its state is gone
// (expired, then dropped), or drained and written again by a decision of
// 1 unit; the clock steps back to a second after the first decision; what
// is left is taken; the first decision is settled at 0. Its units were
// never in the state written afresh, and none may come back (before
// states had epochs, 4 did: what the first decision would still have held
// a second after it, on a clock that had not seen it drain).
func TestNoGiveBackIntoAFreshState(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0 := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	h := time.Hour
	for _, rule := range []algorithms.Algorithm{
		algorithms.GCRA{Rate: 10, Period: h, Burst: 10},
		algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: h},
		algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: h},
		algorithms.Queue{Rate: 10, Period: h, MaxDelay: h},
	} {
		for _, gone := range []bool{true, false} {
			now := t0
			lua, model, _, key := luaAndModel(t, s.Client, &now, "fresh", []limiter.Rule{{Name: "r", Algorithm: rule}})
			for i, lim := range []*limiter.Limiter{lua, model} {
				store := []string{"lua", "model"}[i]
				now = t0
				take := func(cost int) limiter.Decision {
					t.Helper()
					d, err := lim.Decide(ctx, limiter.Check{Rule: "r", Identity: "x", Cost: cost})
					if err != nil || !d.Allowed {
						t.Fatalf("%v (%s): cost %d: %+v %v", rule, store, cost, d, err)
					}
					return d
				}
				left := func() int {
					t.Helper()
					d, err := lim.Status(ctx, "r", "x")
					if err != nil {
						t.Fatal(err)
					}
					return d.Results[0].Remaining
				}
				first := take(5)
				if gone {
					now = t0.Add(2 * h) // the state has expired: the memstore drops it, the key goes
					if err := s.Client.Del(ctx, key).Err(); err != nil {
						t.Fatal(err)
					}
					if err := model.Reset(ctx, "r", "x"); !errors.Is(err, limiter.ErrNotFound) {
						t.Fatalf("%v: the model's expired state reset: %v", rule, err)
					}
				} else {
					now = t0.Add(31 * time.Minute) // drained: the state holds nothing
					take(1)
				}
				now = t0.Add(time.Second) // the clock steps back
				take(left())
				if _, err := lim.Settle(ctx, first, 0); err != nil {
					t.Fatal(err)
				}
				if got := left(); got != 0 {
					t.Errorf("%v gone %v (%s): %d left after the state written afresh was used up and a decision of the state before was settled, want 0", rule, gone, store, got)
				}
			}
		}
	}
}

// TestNoGiveBackOfALaterDecisionsUnits: a give-back counts the draining
// its state has seen, not only the clock's: a decision takes 5 units of a
// bucket, GCRA or queue of 10 an hour; 27 minutes later, when half a unit
// of it is left, another takes 1; the clock steps back to a second after
// the first, which is settled at 0. What is left is then exactly what is
// left to a client that made only the second decision, on the Lua scripts
// as in the Go model. Before, the give-back counted a second of draining
// and took back the second decision's units too (GCRA and the queue left
// 9 and 10 where 4 and 5 are left without the first decision; the
// buckets 10 for 9).
func TestNoGiveBackOfALaterDecisionsUnits(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0 := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	h := time.Hour
	for _, alg := range []algorithms.Algorithm{
		algorithms.GCRA{Rate: 10, Period: h, Burst: 10},
		algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: h},
		algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: h},
		algorithms.Queue{Rate: 10, Period: h, MaxDelay: h},
	} {
		now := t0
		lua, model, _, _ := luaAndModel(t, s.Client, &now, "later", []limiter.Rule{{Name: "r", Algorithm: alg}})
		for i, lim := range []*limiter.Limiter{lua, model} {
			store := []string{"lua", "model"}[i]
			take := func(id string, at time.Duration, cost int) limiter.Decision {
				t.Helper()
				now = t0.Add(at)
				d, err := lim.Decide(ctx, limiter.Check{Rule: "r", Identity: id, Cost: cost})
				if err != nil || !d.Allowed {
					t.Fatalf("%v (%s): %s cost %d: %+v %v", alg, store, id, cost, d, err)
				}
				return d
			}
			left := func(id string) int {
				t.Helper()
				d, err := lim.Status(ctx, "r", id)
				if err != nil {
					t.Fatal(err)
				}
				return d.Results[0].Remaining
			}
			first := take("x", 0, 5)
			take("x", 27*time.Minute, 1)
			take("y", 27*time.Minute, 1) // the second decision alone
			now = t0.Add(time.Second)    // the clock steps back
			if _, err := lim.Settle(ctx, first, 0); err != nil {
				t.Fatal(err)
			}
			if got, want := left("x"), left("y"); got != want {
				t.Errorf("%v (%s): %d left after the first decision was settled at 0, want %d, as without it", alg, store, got, want)
			}
		}
	}
}

// stepped drives one limiter on *now, at instants from t0.
type stepped struct {
	t   *testing.T
	lim *limiter.Limiter
	now *time.Time
	t0  time.Time
	tag string
}

// take decides cost for id at t0+at under plan (nil: the rule's); it must
// be admitted.
func (r stepped) take(id string, at time.Duration, cost int, plan algorithms.Algorithm) limiter.Decision {
	r.t.Helper()
	*r.now = r.t0.Add(at)
	d, err := r.lim.Decide(ctx, limiter.Check{Rule: "r", Identity: id, Cost: cost, Plan: plan})
	if err != nil || !d.Allowed {
		r.t.Fatalf("%s: %s cost %d at %v: %+v %v", r.tag, id, cost, at, d, err)
	}
	return d
}

// settle settles d at final at t0+at.
func (r stepped) settle(at time.Duration, d limiter.Decision, final int) {
	r.t.Helper()
	*r.now = r.t0.Add(at)
	if _, err := r.lim.Settle(ctx, d, final); err != nil {
		r.t.Fatal(err)
	}
}

// twice runs steps for a client x that made a second decision of 5
// units at t0, settled at 0 at t0+at once steps are done, and for a
// client y that did not; both made a first decision of 5 units at t0,
// which steps receives. It returns what each has left then.
func (r stepped) twice(at time.Duration, steps func(id string, first limiter.Decision)) (x, y int) {
	var left [2]int
	for j, id := range []string{"x", "y"} {
		first := r.take(id, 0, 5, nil)
		var second limiter.Decision
		if id == "x" {
			second = r.take(id, 0, 5, nil)
		}
		steps(id, first)
		if id == "x" {
			r.settle(at, second, 0)
		}
		left[j] = r.left(id)
	}
	return left[0], left[1]
}

// left is what id has left now.
func (r stepped) left(id string) int {
	r.t.Helper()
	d, err := r.lim.Status(ctx, "r", id)
	if err != nil {
		r.t.Fatal(err)
	}
	return d.Results[0].Remaining
}

// TestBucketLedgerOutlivesAClockStepBack: a bucket's give-back made on a
// clock that stepped back keeps its account of what was given back until
// the level has drained from its last update, ahead of now, not from now.
// Two decisions of 5 units of a bucket of 10 an hour; the clock steps back
// an hour and the first is settled at 0; 20 minutes after the two, 8 more
// are taken and the second is settled at 0. A client that made only the
// first has as many left, on the Lua scripts as in the model. Before, the
// account ended an hour early, the second decision's give-back no longer
// counted the first's, and 3 units too many came back (5 left for 2).
func TestBucketLedgerOutlivesAClockStepBack(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0, h := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC), time.Hour
	for _, alg := range []algorithms.Algorithm{
		algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: h},
		algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: h},
	} {
		now := t0
		lua, model, _, _ := luaAndModel(t, s.Client, &now, "horizon", []limiter.Rule{{Name: "r", Algorithm: alg}})
		for i, lim := range []*limiter.Limiter{lua, model} {
			r := stepped{t, lim, &now, t0, alg.String() + " " + []string{"lua", "model"}[i]}
			x, y := r.twice(20*time.Minute, func(id string, first limiter.Decision) {
				r.settle(-h, first, 0) // the clock stepped back an hour
				r.take(id, 20*time.Minute, 8, nil)
			})
			if x != y {
				t.Errorf("%s: %d left with the second decision settled at 0, %d without it", r.tag, x, y)
			}
		}
	}
}

// TestGCRAPlanSwitchAfterAClockStepBack: GCRA's switch to another plan
// voids the give-backs of every decision the state has seen, also those
// made later than the switch on a clock that stepped back. Two decisions
// of 5 units (a unit an hour); the first is settled at 0; the clock steps
// back 8 s, a unit is taken under another plan of the same unit, then
// one under the rule's; 5 hours on, 17 are taken and the second decision
// is settled at 0. A client that made only the first has no fewer left,
// on the Lua scripts as in the model (it has more: each switch carries
// the other's units in use rounded up, and the second decision gives
// nothing back). Before, the switch voided decisions up to its own
// instant only and forgot the first give-back, and the second gave back
// units that had drained 5 hours before (5 left for 3).
func TestGCRAPlanSwitchAfterAClockStepBack(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t0, h := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC), time.Hour
	a := algorithms.GCRA{Rate: 10, Period: 10 * h, Burst: 20}
	b := algorithms.GCRA{Rate: 1, Period: h, Burst: 20}
	now := t0
	lua, model, _, _ := luaAndModel(t, s.Client, &now, "gswitch", []limiter.Rule{{Name: "r", Algorithm: a}})
	for i, lim := range []*limiter.Limiter{lua, model} {
		r := stepped{t, lim, &now, t0, []string{"lua", "model"}[i]}
		x, y := r.twice(5*h, func(id string, first limiter.Decision) {
			r.settle(0, first, 0)
			r.take(id, -8*time.Second, 1, b) // the clock steps back: plan b
			r.take(id, -7*time.Second, 1, a) // and the rule's again
			r.take(id, 5*h, 17, nil)
		})
		if x > y {
			t.Errorf("%s: %d left with the second decision settled at 0, %d without it", r.tag, x, y)
		}
	}
}
