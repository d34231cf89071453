package limiter_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

func TestSettle(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) { settleTable(t, store, fmt.Sprintf("settle%d", time.Now().UnixNano())) })
	}
}

// settleTable checks on store that settling gives back exactly, for every
// algorithm and for stacks: a login rule of 5 admits any number of
// successful logins (settled at 0) and exactly 5 failures (settled at 1);
// a reservation of 4 settled at 1 leaves limit-1; a settlement above the
// reservation charges the difference, or is denied beyond the limit.
func settleTable(t *testing.T, store store.Store, prefix string) {
	now := bases[1]
	rules := ruletest.Six(5)
	lim, err := limiter.New(store, rules, limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	settle := func(d limiter.Decision, final ...int) limiter.Decision {
		t.Helper()
		more, err := lim.Settle(ctx, d, final...)
		if err != nil {
			t.Fatal(err)
		}
		return more
	}
	for _, r := range rules {
		failures, successes := 0, 0
		for i := range 40 {
			now = now.Add(time.Microsecond)
			d, err := lim.Allow(ctx, r.Name, "login")
			if err != nil {
				t.Fatal(err)
			}
			if !d.Allowed {
				continue
			}
			if i%4 == 3 { // a failed login
				failures++
				settle(d, 1)
			} else {
				successes++
				settle(d, 0)
			}
		}
		if failures != 5 || successes != 15 {
			t.Errorf("%s: %d failures and %d successes admitted, want 5 and 15 (all until the 5th failure)", r.Name, failures, successes)
		}

		d, err := lim.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "reserve", Cost: 4})
		if err != nil || !d.Allowed {
			t.Fatalf("%s: reserve 4: %+v %v", r.Name, d, err)
		}
		settle(d, 1)
		st, _ := lim.Status(ctx, r.Name, "reserve")
		if got := st.Results[0].Remaining; got != 4 {
			t.Errorf("%s: reserved 4, settled at 1: %d remaining, want 4", r.Name, got)
		}
		d, _ = lim.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "reserve", Cost: 1})
		if more := settle(d, 3); !more.Allowed || more.Results[0].Remaining != 1 {
			t.Errorf("%s: 1 settled at 3: %+v, want 2 more charged, 1 remaining", r.Name, more)
		}
		d, _ = lim.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "reserve", Cost: 1})
		if more := settle(d, 5); more.Allowed {
			t.Errorf("%s: 4 more beyond the limit were charged: %+v", r.Name, more)
		}
	}

	// A stack gives back per rule; a denied decision settles nothing.
	d, err := lim.Decide(ctx, ruletest.Checks(rules, "stack", 3)...)
	if err != nil || !d.Allowed {
		t.Fatal(d, err)
	}
	settle(d, 0, 1, 2, 3, 0, 1)
	st, _ := lim.Decide(ctx, ruletest.Checks(rules, "stack", 0)...)
	for i, want := range []int{5, 4, 3, 2, 5, 4} {
		if got := st.Results[i].Remaining; got != want {
			t.Errorf("stack: %s has %d remaining, want %d", rules[i].Name, got, want)
		}
	}
	if _, err := lim.Settle(ctx, st, 1); !errors.Is(err, limiter.ErrCheck) {
		t.Errorf("settling 6 rules with 1 cost: %v, want ErrCheck", err)
	}

	// Settled once: a second Settle, of the decision or a copy of it,
	// gives nothing more back.
	d, _ = lim.Decide(ctx, ruletest.Checks(rules, "twice", 5)...)
	copied := d
	settle(d, 0, 0, 0, 0, 0, 0)
	for _, again := range []limiter.Decision{d, copied} {
		if _, err := lim.Settle(ctx, again, 0, 0, 0, 0, 0, 0); !errors.Is(err, limiter.ErrSettled) {
			t.Errorf("second settle: %v, want ErrSettled", err)
		}
	}
	st, _ = lim.Decide(ctx, ruletest.Checks(rules, "twice", 0)...)
	for i, r := range st.Results {
		if r.Remaining != 5 {
			t.Errorf("settled twice: %s has %d remaining, want 5", rules[i].Name, r.Remaining)
		}
	}
	// A decision made before a Reset gives nothing back after it: the
	// client starts afresh, and only afresh.
	for _, r := range rules {
		d, err := lim.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "reset", Cost: 5})
		if err != nil || !d.Allowed {
			t.Fatalf("%s: %+v %v", r.Name, d, err)
		}
		if err := lim.Reset(ctx, r.Name, "reset"); err != nil {
			t.Fatal(err)
		}
		d2, err := lim.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "reset", Cost: 5})
		if err != nil || !d2.Allowed {
			t.Fatalf("%s after the reset: %+v %v", r.Name, d2, err)
		}
		settle(d, 0)
		if st, _ := lim.Status(ctx, r.Name, "reset"); st.Results[0].Remaining != 0 {
			t.Errorf("%s: 5 taken, reset, 5 taken again, the first settled at 0: %d remaining, want 0", r.Name, st.Results[0].Remaining)
		}
	}
	lateGiveBack(t, store, prefix)
}

// lateGiveBack: a decision settled after its bucket refilled gives back
// only what a smaller decision at its instant would have left. A bucket of
// 10 refilling 10 per 10 s: 10 taken at t0; by t0+10s it is full again and
// 10 more are taken; settling the first at 0 then gives nothing back (all
// 10 had drained away), where subtracting from the current state admitted
// 10 more at once, 20 in an instant. Half refilled (5 more taken at
// t0+5s), it gives back 5. Settled at once, all 10.
func lateGiveBack(t *testing.T, store store.Store, prefix string) {
	t.Helper()
	for _, alg := range []algorithms.Algorithm{
		algorithms.TokenBucket{Capacity: 10, Rate: 10, Period: 10 * time.Second},
		algorithms.LeakyBucket{Capacity: 10, Rate: 10, Period: 10 * time.Second},
		algorithms.GCRA{Rate: 10, Period: 10 * time.Second, Burst: 10},
	} {
		for _, tc := range []struct {
			later      time.Duration
			taken, get int // taken before the settlement, admitted after it
		}{{0, 0, 10}, {10 * time.Second, 10, 0}, {5 * time.Second, 5, 5}, {7 * time.Second, 7, 3}} {
			now := bases[0]
			lim, err := limiter.New(store, []limiter.Rule{{Name: "late", Algorithm: alg}},
				limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(fmt.Sprintf("%s-late%d", prefix, time.Now().UnixNano())),
				limiter.WithDenyCache(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			take := func(n int) (admitted int) {
				for range n {
					if d, err := lim.Allow(ctx, "late", "u"); err != nil {
						t.Fatal(err)
					} else if d.Allowed {
						admitted++
					}
				}
				return admitted
			}
			d, err := lim.Decide(ctx, limiter.Check{Rule: "late", Identity: "u", Cost: 10})
			if err != nil || !d.Allowed {
				t.Fatalf("%v: %+v %v", alg, d, err)
			}
			now = now.Add(tc.later)
			if got := take(tc.taken + 1); got != tc.taken {
				t.Fatalf("%v, %v later: %d admitted, want %d", alg, tc.later, got, tc.taken)
			}
			if _, err := lim.Settle(ctx, d, 0); err != nil {
				t.Fatal(err)
			}
			if got := take(20); got != tc.get {
				t.Errorf("%v: 10 taken, %v later %d more, then the 10 settled at 0: %d admitted, want %d", alg, tc.later, tc.taken, got, tc.get)
			}
		}
	}
}
