package limiter_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// A Reset voids the give-backs of decisions made before it into the state
// it forgot, whichever limiter made them and whatever their window, and
// only those: a decision of cost take, a Reset through the resetter's rule
// "api" (naming the plan when named), wait, then (when retake) the same
// decision again into the fresh state, then the first settled at 0. want
// is what the decider's check has left after that. Guarded: a decision
// under a GCRA of 10 hours must not give back into the state that a GCRA
// of 1 second reset (both keep one key), nor a plan's decision once the
// rule's shorter window has passed; a GCRA's Reset must not void a fixed
// window's give-backs.
func TestResetVoidsGiveBacksIntoWhatItForgot(t *testing.T) {
	long := algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 10}
	short := algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 10}
	second := algorithms.FixedWindow{Limit: 10, Window: time.Second}
	hour := algorithms.FixedWindow{Limit: 10, Window: time.Hour}
	for _, tc := range []struct {
		name              string
		decider, resetter algorithms.Algorithm // rule "api" of two limiters, or of one when resetter is nil
		plan              algorithms.Algorithm // the decider's checks' plan, or nil
		named             bool                 // the Reset names the plan
		take              int
		wait              time.Duration
		retake            bool
		want              int
	}{
		{"GCRA of 10 h, reset by one of 1 s", long, short, nil, false, 10, 0, true, 0},
		{"GCRA of 10 h, reset by one of 1 s, settled after 3 s", long, short, nil, false, 10, 3 * time.Second, true, 0},
		{"a plan of an hour, named, settled after 3 s", second, nil, hour, true, 10, 3 * time.Second, true, 0},
		{"a GCRA plan of 10 h, settled after 3 s", short, nil, long, false, 10, 3 * time.Second, true, 0},
		{"a fixed window, GCRA reset", hour, long, nil, false, 5, 0, false, 10},
	} {
		for name, store := range everyStore(t) {
			now := bases[1]
			opts := []limiter.Option{limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(fmt.Sprintf("mark%d", time.Now().UnixNano()))}
			dec := must(limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: tc.decider}}, opts...))
			res := dec
			if tc.resetter != nil {
				res = must(limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: tc.resetter}}, opts...))
			}
			var plans []algorithms.Algorithm
			if tc.named {
				plans = append(plans, tc.plan)
			}
			check := limiter.Check{Rule: "api", Identity: "acme", Cost: tc.take, Plan: tc.plan}
			first, err := dec.Decide(ctx, check)
			if err != nil || !first.Allowed {
				t.Fatalf("%s on %s: %+v %v", tc.name, name, first, err)
			}
			now = now.Add(time.Second)
			if err := res.Reset(ctx, "api", "acme", plans...); err != nil && !errors.Is(err, limiter.ErrNotFound) {
				t.Fatal(err)
			}
			now = now.Add(tc.wait)
			if tc.retake {
				if d, err := dec.Decide(ctx, check); err != nil || !d.Allowed {
					t.Fatalf("%s on %s, after the Reset: %+v %v", tc.name, name, d, err)
				}
			}
			if _, err := dec.Settle(ctx, first, 0); err != nil {
				t.Fatal(err)
			}
			check.Cost = 0
			d, err := dec.Decide(ctx, check)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Results[0].Remaining; got != tc.want {
				t.Errorf("%s on %s: %d left, want %d", tc.name, name, got, tc.want)
			}
		}
	}
}

// A Reset voids the give-backs of decisions made before it also across a
// clock that stepped back past the forgotten state's expiry: a decision
// under a GCRA plan of 10 hours (its state gone 6 hours on), the clock
// back 2 hours, one unit taken and reset, then the fresh state used up;
// the first decision settled at 0 must give nothing into it. A mark that
// lasted only as long as the state it forgot (100 ms here) let it give
// back all 10.
func TestResetVoidsGiveBacksAcrossAClockStepBack(t *testing.T) {
	fast := algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 10}
	slow := algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 10}
	for name, store := range everyStore(t) {
		t0 := bases[1]
		now := t0
		lim := must(limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: fast}}, limiter.WithClock(func() time.Time { return now }),
			limiter.WithPrefix(fmt.Sprintf("back%d", time.Now().UnixNano()))))
		first, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "acme", Cost: 5, Plan: slow}) // a TAT 5 h on
		if err != nil || !first.Allowed {
			t.Fatalf("%s: %+v %v", name, first, err)
		}
		now = t0.Add(6 * time.Hour) // the state has expired: nothing to reset
		if err := lim.Reset(ctx, "api", "acme"); !errors.Is(err, limiter.ErrNotFound) && err != nil {
			t.Fatal(err)
		}
		now = t0.Add(4 * time.Hour) // the clock steps back 2 h
		take := func(cost int) {
			if d, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "acme", Cost: cost}); err != nil || !d.Allowed {
				t.Fatalf("%s: cost %d: %+v %v", name, cost, d, err)
			}
		}
		take(1)
		if err := lim.Reset(ctx, "api", "acme"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		now = now.Add(time.Second)
		take(10) // the fresh state used up
		if _, err := lim.Settle(ctx, first, 0); err != nil {
			t.Fatal(err)
		}
		d, err := lim.Status(ctx, "api", "acme")
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Results[0].Remaining; got != 0 {
			t.Errorf("%s: %d left after the fresh state was used up and a decision before the Reset settled, want 0", name, got)
		}
	}
}
