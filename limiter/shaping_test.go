package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

func TestQueue(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) { queueTable(t, store, fmt.Sprintf("queue%d", time.Now().UnixNano())) })
	}
}

// queueTable runs a queue of 10 a second with a 2 s maximum delay on
// store, at fixed instants: 50 requests at once get turns 100 ms apart
// from 0 to 2 s (21 of them), the other 29 are refused with the wait until
// a turn within 2 s frees up; requests that give up free their turns for
// the next to arrive; stacked with a rule that denies, nothing is queued.
func queueTable(t *testing.T, store store.Store, prefix string) {
	for _, base := range bases {
		now := base
		rules := []limiter.Rule{
			{Name: "q", Algorithm: algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}},
			{Name: "gate", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}},
		}
		lim, err := limiter.New(store, rules, limiter.WithClock(func() time.Time { return now }),
			limiter.WithPrefix(fmt.Sprintf("%s-%d", prefix, base.Year())), limiter.WithDenyCache(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		var queued []limiter.Decision
		for i := range 50 {
			d, err := lim.Allow(ctx, "q", "worker")
			if err != nil {
				t.Fatal(err)
			}
			r := d.Results[0]
			switch {
			case i <= 20 && (!d.Allowed || r.Delay != time.Duration(i)*100*time.Millisecond || r.Remaining != 20-i):
				t.Fatalf("request %d: %+v, want a turn in %d ms and %d turns left", i, r, i*100, 20-i)
			case i > 20 && (d.Allowed || r.RetryAfter != 100*time.Millisecond || r.Remaining != 0):
				t.Fatalf("request %d: %+v, want refused for 100 ms", i, r)
			}
			if d.Allowed {
				queued = append(queued, d)
			}
		}
		if r := queued[20].Results[0]; r.Policy.Quota != 21 || r.ResetAfter != 2100*time.Millisecond || r.NextAfter != 100*time.Millisecond {
			t.Errorf("last queued: %+v, want quota 21, empty in 2.1 s, a turn in 100 ms", r)
		}
		// Three give up: their turns go to the next three to arrive.
		for _, i := range []int{5, 6, 7} {
			if _, err := lim.Settle(ctx, queued[i], 0); err != nil {
				t.Fatal(err)
			}
		}
		now = now.Add(50 * time.Millisecond)
		for i := range 4 {
			d, _ := lim.Allow(ctx, "q", "worker")
			want := time.Duration(1800+100*i) * time.Millisecond // the tail less the three turns, 50 ms on
			if i == 3 {
				if d.Allowed {
					t.Errorf("a fourth newcomer was queued: %+v", d.Results[0])
				}
				continue
			}
			if !d.Allowed || d.Results[0].Delay != want-50*time.Millisecond {
				t.Errorf("newcomer %d: %+v, want a turn in %v", i, d.Results[0], want-50*time.Millisecond)
			}
		}
		// All or nothing: a stack that another rule denies takes no turn.
		if d, _ := lim.Decide(ctx, limiter.Check{Rule: "q", Identity: "other", Cost: 1}, limiter.Check{Rule: "gate", Identity: "g", Cost: 1}); !d.Allowed {
			t.Fatal("first stack denied")
		}
		d, _ := lim.Decide(ctx, limiter.Check{Rule: "q", Identity: "other", Cost: 1}, limiter.Check{Rule: "gate", Identity: "g", Cost: 1})
		if d.Allowed || d.Results[0].Delay != 100*time.Millisecond {
			t.Errorf("denied stack: %+v, want denied by the gate, the queue's next turn still 100 ms away", d)
		}
		if st, _ := lim.Status(ctx, "q", "other"); st.Results[0].Remaining != 20 {
			t.Errorf("after a denied stack the queue has %d turns, want 20", st.Results[0].Remaining)
		}
		// A context already done takes no turn, on every store.
		done, cancel := context.WithCancel(ctx)
		cancel()
		if d, err := lim.Wait(done, limiter.Check{Rule: "q", Identity: "late", Cost: 1}); !errors.Is(err, context.Canceled) || errors.Is(err, limiter.ErrBackend) || d.Allowed {
			t.Errorf("Wait with a cancelled context: %+v, %v; want context.Canceled and no turn", d, err)
		}
		if st, _ := lim.Status(ctx, "q", "late"); st.Results[0].Remaining != 21 {
			t.Errorf("after a cancelled Wait the queue has %d turns, want 21", st.Results[0].Remaining)
		}
	}
}

func TestConcurrency(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) { concurrencyTable(t, store, fmt.Sprintf("conc%d", time.Now().UnixNano())) })
	}
}

// concurrencyTable holds at most 10 slots at once on store: the 11th
// request is refused until a slot is given back or, if its holder died,
// expires after the 30 s TTL.
func concurrencyTable(t *testing.T, store store.Store, prefix string) {
	now := bases[1]
	lim, err := limiter.New(store, []limiter.Rule{{Name: "in-flight", Algorithm: algorithms.Concurrency{Limit: 10, TTL: 30 * time.Second}}},
		limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(prefix), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var slots []limiter.Decision
	for i := range 10 {
		now = now.Add(time.Millisecond)
		d, err := lim.Allow(ctx, "in-flight", "key")
		if err != nil || !d.Allowed || d.Results[0].Remaining != 9-i || d.Results[0].Policy.Unit != "concurrent-requests" {
			t.Fatalf("slot %d: %+v %v", i, d, err)
		}
		slots = append(slots, d)
	}
	d, _ := lim.Allow(ctx, "in-flight", "key")
	if d.Allowed || d.Results[0].RetryAfter != 30*time.Second-9*time.Millisecond {
		t.Fatalf("11th: %+v, want refused until the oldest slot expires", d.Results[0])
	}
	if _, err := lim.Settle(ctx, slots[4], 0); err != nil { // a request ends
		t.Fatal(err)
	}
	if d, _ := lim.Allow(ctx, "in-flight", "key"); !d.Allowed || d.Results[0].Remaining != 0 {
		t.Fatalf("after a release: %+v, want the freed slot", d.Results[0])
	}
	// The holders die: nothing is released, the slots expire.
	now = now.Add(30*time.Second - 10*time.Millisecond)
	if d, _ := lim.Allow(ctx, "in-flight", "key"); d.Allowed {
		t.Fatal("admitted before any slot expired")
	}
	now = now.Add(time.Millisecond)
	if d, _ := lim.Allow(ctx, "in-flight", "key"); !d.Allowed {
		t.Fatalf("the oldest slot did not expire after 30 s: %+v", d.Results[0])
	}
}

func TestQueueGivesBackInAnyOrder(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) { queueOrders(t, store, fmt.Sprintf("qorder%d", time.Now().UnixNano())) })
	}
}

// queueOrders: ten requests at t0 take the turns t0 to t0+900 ms of a
// queue of 10 a second; from t0+10 ms, one a millisecond, the requests of
// some turns go away and are settled at 0. Turns still ahead of now give
// back their whole length in any order: with turns 3 to 7 gone, the next
// arrival's turn is t0+500 ms whichever leaves first. A turn that has
// started gives back only its part still ahead: turn 0, 90 ms at t0+10 ms
// or 89 ms at t0+11 ms.
func queueOrders(t *testing.T, store store.Store, prefix string) {
	for _, base := range bases {
		for _, tc := range []struct {
			gone []int
			next time.Duration // the next arrival's turn, after t0
		}{
			{[]int{3, 4, 5, 6, 7}, 500 * time.Millisecond},
			{[]int{7, 6, 5, 4, 3}, 500 * time.Millisecond},
			{[]int{5, 3, 7, 4, 6}, 500 * time.Millisecond},
			{[]int{9, 8, 1, 2}, 600 * time.Millisecond},
			{[]int{2, 1, 8, 9}, 600 * time.Millisecond},
			{[]int{4, 0}, 811 * time.Millisecond},
			{[]int{0, 4}, 810 * time.Millisecond},
		} {
			now := base
			lim, err := limiter.New(store, []limiter.Rule{{Name: "q", Algorithm: algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}}},
				limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(fmt.Sprintf("%s-%d-%v", prefix, base.Year(), tc.gone)), limiter.WithDenyCache(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			var turns []limiter.Decision
			for range 10 {
				d, err := lim.Allow(ctx, "q", "w")
				if err != nil || !d.Allowed {
					t.Fatalf("%+v %v", d, err)
				}
				turns = append(turns, d)
			}
			now = now.Add(10 * time.Millisecond)
			for _, i := range tc.gone {
				if _, err := lim.Settle(ctx, turns[i], 0); err != nil {
					t.Fatal(err)
				}
				now = now.Add(time.Millisecond)
			}
			d, err := lim.Allow(ctx, "q", "w")
			if got, want := now.Add(d.Results[0].Delay).Sub(base), tc.next; err != nil || !d.Allowed || got != want {
				t.Errorf("%d: turns %v gone from t0+10 ms, one a millisecond: the next arrival's turn is t0+%v, want t0+%v (%v)",
					base.Year(), tc.gone, got, want, err)
			}
		}
	}
}

func TestQueueForgetsOldGiveBacks(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) { queueForgets(t, store, fmt.Sprintf("qforget%d", time.Now().UnixNano())) })
	}
}

// queueForgets: a key forgets its give-backs once no decision's turns can
// use them, and a decision older than that gets nothing back. At t0 ten
// turns are taken and given back, then one is taken (turn 0, after a
// second of turns given back). At t0+1s, the give-backs forgotten, eleven
// are taken and the last ten given back. The decision of t0, its turn
// long past, settled at 0 then gives nothing back: the next turn is still
// 100 ms away.
func queueForgets(t *testing.T, store store.Store, prefix string) {
	for _, base := range bases {
		now := base
		lim, err := limiter.New(store, []limiter.Rule{{Name: "q", Algorithm: algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}}},
			limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(fmt.Sprintf("%s-%d", prefix, base.Year())), limiter.WithDenyCache(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		// take takes n turns and gives back all but the first kept, the
		// last first.
		take := func(n, kept int) limiter.Decision {
			var taken []limiter.Decision
			for range n {
				d, err := lim.Allow(ctx, "q", "w")
				if err != nil || !d.Allowed {
					t.Fatalf("%+v %v", d, err)
				}
				taken = append(taken, d)
			}
			for i := n - 1; i >= kept; i-- {
				if _, err := lim.Settle(ctx, taken[i], 0); err != nil {
					t.Fatal(err)
				}
			}
			return taken[0]
		}
		take(10, 0)
		old := take(1, 1)
		now = now.Add(time.Second)
		take(11, 1)
		if _, err := lim.Settle(ctx, old, 0); err != nil {
			t.Fatal(err)
		}
		if st, err := lim.Status(ctx, "q", "w"); err != nil || st.Results[0].Delay != 100*time.Millisecond {
			t.Errorf("%d: a turn of t0 given back at t0+1s: the next turn %v away (%v), want 100ms", base.Year(), st.Results[0].Delay, err)
		}
	}
}

// A request that leaves while it waits for its turn gives back everything
// its decision took: its turn in the queue and its slot in a concurrency
// limit of the same stack, which the next request then gets.
func TestWaitCancelledReleasesTheStack(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) {
			lim, err := limiter.New(store, []limiter.Rule{
				{Name: "q", Algorithm: algorithms.Queue{Rate: 1, Period: time.Hour, MaxDelay: 2 * time.Hour}},
				{Name: "slots", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Hour}},
			}, limiter.WithPrefix(fmt.Sprintf("leave%d", time.Now().UnixNano())), limiter.WithDenyCache(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			stack := []limiter.Check{{Rule: "q", Identity: "w", Cost: 1}, {Rule: "slots", Identity: "w", Cost: 1}}
			first, err := lim.Wait(ctx, stack...)
			if err != nil || !first.Allowed {
				t.Fatalf("first request: %+v, %v", first, err)
			}
			leaving, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			d, err := lim.Wait(leaving, stack...)
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limiter.ErrBackend) || !d.Allowed || d.Results[0].Delay <= 0 {
				t.Fatalf("second request: %+v, %v; want a turn an hour away, then the context's end", d, err)
			}
			st, err := lim.Status(ctx, "slots", "w")
			if err != nil || st.Results[0].Remaining != 1 {
				t.Errorf("slots left after the second request left: %+v, %v; want 1 (the first request's held)", st, err)
			}
			st, err = lim.Status(ctx, "q", "w")
			if err != nil || st.Results[0].Remaining != 2 {
				t.Errorf("queue after the second request left: %+v, %v; want 2 of its 3 turns (its turn back)", st, err)
			}
		})
	}
}
