package limiter_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// planStores are the stores a plan test runs on: the memstore and every
// Redis backend (with a timeout that a loaded machine running 32 goroutines
// under the race detector does not reach).
func planStores(t *testing.T) map[string]func(t *testing.T) store.Store {
	stores := map[string]func(t *testing.T) store.Store{
		"memstore": func(*testing.T) store.Store { return memstore.Must() },
	}
	for _, b := range redistest.Backends(t) {
		stores[b.Name] = func(t *testing.T) store.Store {
			return mustStore(redisstore.New(b.Client, redisstore.WithMinTTL(time.Hour), redisstore.WithTimeout(5*time.Second)))
		}
	}
	return stores
}

// planLimiter is a limiter with one rule "api" on store, at the clock
// *now, and a deny cache of denyCache entries.
func planLimiter(t *testing.T, store store.Store, alg algorithms.Algorithm, now *time.Time, denyCache int) *limiter.Limiter {
	lim, err := limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: alg}},
		limiter.WithClock(func() time.Time { return *now }), limiter.WithPrefix(fmt.Sprintf("plan%d", time.Now().UnixNano())),
		limiter.WithDenyCache(denyCache, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// admit asks for n requests of cost 1 under plan alg and counts the
// admitted ones; last is the last decision.
func admit(t *testing.T, lim *limiter.Limiter, alg algorithms.Algorithm, n int) (admitted int, last limiter.Decision) {
	t.Helper()
	for range n {
		d, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "acme", Cost: 1, Plan: alg})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
		last = d
	}
	return admitted, last
}

// A client on a free plan (2 an hour) uses it up, is refused, then upgrades
// to a paid plan (5 an hour) in the same window. What the upgrade gives at
// once follows each algorithm's state: counts carry over (the windows and
// the log: 3 more now), and so do a bucket's level, whatever its period,
// and GCRA's units in use, whatever its rate (2 of 5 in use: 3 more). Then
// a downgrade back to the free plan: nothing more.
func TestLimitsPerCheck(t *testing.T) {
	stores := planStores(t)
	for _, tc := range []struct {
		free, paid algorithms.Algorithm
		upgrade    int // admitted at once after the upgrade
	}{
		{algorithms.FixedWindow{Limit: 2, Window: time.Hour}, algorithms.FixedWindow{Limit: 5, Window: time.Hour}, 3},
		{algorithms.FixedWindow{Limit: 2, Window: time.Hour, Anchored: true}, algorithms.FixedWindow{Limit: 5, Window: time.Hour, Anchored: true}, 3},
		{algorithms.SlidingWindow{Limit: 2, Window: time.Hour}, algorithms.SlidingWindow{Limit: 5, Window: time.Hour}, 3},
		{algorithms.SlidingLog{Limit: 2, Window: time.Hour}, algorithms.SlidingLog{Limit: 5, Window: time.Hour}, 3},
		{algorithms.Concurrency{Limit: 2, TTL: time.Hour}, algorithms.Concurrency{Limit: 5, TTL: time.Hour}, 3},
		{algorithms.LeakyBucket{Capacity: 2, Rate: 2, Period: time.Hour}, algorithms.LeakyBucket{Capacity: 5, Rate: 5, Period: time.Hour}, 3},
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: time.Hour}, algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: time.Hour}, 3},
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: time.Hour}, algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: 30 * time.Minute}, 3},
		{algorithms.GCRA{Rate: 2, Period: time.Hour, Burst: 2}, algorithms.GCRA{Rate: 5, Period: time.Hour, Burst: 5}, 3},
		{algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 2}, algorithms.GCRA{Rate: 5, Period: time.Hour, Burst: 5}, 3},
		{algorithms.GCRA{Rate: 5, Period: time.Hour, Burst: 2}, algorithms.GCRA{Rate: 5, Period: time.Hour, Burst: 5}, 3},
	} {
		for name, store := range stores {
			now := bases[0]
			lim := planLimiter(t, store(t), tc.free, &now, 100)
			if got, _ := admit(t, lim, tc.free, 3); got != 2 {
				t.Errorf("%v on %s: free plan admitted %d of 3, want 2", tc.free, name, got)
			}
			got, last := admit(t, lim, tc.paid, 6)
			if got != tc.upgrade || last.Results[0].Policy != algorithms.PolicyOf(tc.paid) {
				t.Errorf("%v -> %v on %s: upgrade admitted %d at once, want %d; reported %+v", tc.free, tc.paid, name, got, tc.upgrade, last.Results[0])
			}
			if got, _ := admit(t, lim, tc.free, 2); got != 0 {
				t.Errorf("%v on %s: downgrade admitted %d, want 0", tc.free, name, got)
			}
		}
	}
}

// One client whose concurrent requests carry either a free plan (2 an
// hour) or a paid one (5 an hour) of one rule is admitted no more than the
// paid plan alone admits the same client: the plans count into one state,
// for every algorithm (a state per plan would let 2 + 5 through). So is a
// client that uses up one plan, then the other, in either order (a GCRA
// that read its debt as time would let 1 an hour with a burst of 2, two
// hours of tolerance, admit a sixth after the paid plan's 5).
func TestMixedPlansAtOnce(t *testing.T) {
	t.Parallel()
	h := time.Hour
	stores := planStores(t)
	for _, tc := range []struct{ free, paid algorithms.Algorithm }{
		{algorithms.FixedWindow{Limit: 2, Window: h}, algorithms.FixedWindow{Limit: 5, Window: h}},
		{algorithms.FixedWindow{Limit: 2, Window: h, Anchored: true}, algorithms.FixedWindow{Limit: 5, Window: h, Anchored: true}},
		{algorithms.SlidingWindow{Limit: 2, Window: h}, algorithms.SlidingWindow{Limit: 5, Window: h}},
		{algorithms.SlidingLog{Limit: 2, Window: h}, algorithms.SlidingLog{Limit: 5, Window: h}},
		{algorithms.Concurrency{Limit: 2, TTL: h}, algorithms.Concurrency{Limit: 5, TTL: h}},
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: h}, algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: h}},
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: h}, algorithms.TokenBucket{Capacity: 5, Rate: 10, Period: 2 * h}},
		{algorithms.LeakyBucket{Capacity: 2, Rate: 2, Period: h}, algorithms.LeakyBucket{Capacity: 5, Rate: 5, Period: h}},
		{algorithms.GCRA{Rate: 2, Period: h, Burst: 2}, algorithms.GCRA{Rate: 5, Period: h, Burst: 5}},
		{algorithms.GCRA{Rate: 1, Period: h, Burst: 2}, algorithms.GCRA{Rate: 5, Period: h, Burst: 5}},
		{algorithms.GCRA{Rate: 5, Period: h, Burst: 2}, algorithms.GCRA{Rate: 10, Period: 2 * h, Burst: 5}},
		{algorithms.Queue{Rate: 2, Period: h, MaxDelay: h}, algorithms.Queue{Rate: 5, Period: h, MaxDelay: h}},
		{algorithms.Queue{Rate: 1, Period: h, MaxDelay: 2 * h}, algorithms.Queue{Rate: 5, Period: h, MaxDelay: 2 * h}},
	} {
		for name, store := range stores {
			now := bases[0]
			lim := planLimiter(t, store(t), tc.free, &now, 0)
			var n atomic.Int64
			mixed := ruletest.Hammer(t, 32, 2, func() (limiter.Decision, error) {
				plan := tc.free
				if n.Add(1)%2 == 0 {
					plan = tc.paid
				}
				return lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "mixed", Cost: 1, Plan: plan})
			})
			alone := ruletest.Hammer(t, 32, 2, func() (limiter.Decision, error) {
				return lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "alone", Cost: 1, Plan: tc.paid})
			})
			if mixed > alone || mixed < 2 {
				t.Errorf("%v and %v on %s: 64 concurrent requests of both plans admitted %d, the second alone %d", tc.free, tc.paid, name, mixed, alone)
			}
			for _, order := range [][2]algorithms.Algorithm{{tc.free, tc.paid}, {tc.paid, tc.free}} {
				lim := planLimiter(t, store(t), tc.free, &now, 0)
				first, _ := admit(t, lim, order[0], algorithms.PolicyOf(order[0]).Quota+1)
				then, _ := admit(t, lim, order[1], algorithms.PolicyOf(order[1]).Quota+1)
				if int64(first+then) > alone {
					t.Errorf("%v then %v on %s: admitted %d then %d, more than the %d of %v alone", order[0], order[1], name, first, then, alone, tc.paid)
				}
			}
		}
	}
}

// Switching a client to any other parameter set of its algorithm and back
// never erases or rewrites what the first set counted: a client that used
// up plan p, then half of p's window later used plan q (another limit,
// window, rate or period), is admitted under p no more than p alone would
// admit then (less where the plans share state: q's admissions count), and
// q never admits more than its own quota. (A sliding log keyed without its
// window let a minute's plan trim an hour's entries.)
func TestPlanSwitchKeepsState(t *testing.T) {
	t.Parallel()
	h, m := time.Hour, time.Minute
	families := [][]algorithms.Algorithm{
		{algorithms.FixedWindow{Limit: 4, Window: h}, algorithms.FixedWindow{Limit: 2, Window: h}, algorithms.FixedWindow{Limit: 3, Window: m}},
		{algorithms.FixedWindow{Limit: 4, Window: h, Anchored: true}, algorithms.FixedWindow{Limit: 2, Window: m, Anchored: true}},
		{algorithms.SlidingWindow{Limit: 4, Window: h}, algorithms.SlidingWindow{Limit: 2, Window: h}, algorithms.SlidingWindow{Limit: 3, Window: m}},
		{algorithms.SlidingLog{Limit: 4, Window: h}, algorithms.SlidingLog{Limit: 2, Window: h}, algorithms.SlidingLog{Limit: 3, Window: m}},
		{algorithms.Concurrency{Limit: 4, TTL: h}, algorithms.Concurrency{Limit: 2, TTL: h}, algorithms.Concurrency{Limit: 3, TTL: m}},
		{algorithms.TokenBucket{Capacity: 4, Rate: 4, Period: h}, algorithms.TokenBucket{Capacity: 2, Rate: 4, Period: h},
			algorithms.TokenBucket{Capacity: 4, Rate: 1, Period: h}, algorithms.TokenBucket{Capacity: 3, Rate: 3, Period: m}},
		{algorithms.LeakyBucket{Capacity: 4, Rate: 4, Period: h}, algorithms.LeakyBucket{Capacity: 2, Rate: 4, Period: h},
			algorithms.LeakyBucket{Capacity: 4, Rate: 1, Period: h}, algorithms.LeakyBucket{Capacity: 3, Rate: 3, Period: m}},
		{algorithms.GCRA{Rate: 4, Period: h, Burst: 4}, algorithms.GCRA{Rate: 2, Period: h, Burst: 2}, algorithms.GCRA{Rate: 3, Period: m, Burst: 3}},
		{algorithms.Queue{Rate: 4, Period: h, MaxDelay: h}, algorithms.Queue{Rate: 2, Period: h, MaxDelay: h}, algorithms.Queue{Rate: 3, Period: m, MaxDelay: 0}},
	}
	stores := planStores(t)
	for _, family := range families {
		for _, p := range family {
			half := algorithms.PolicyOf(p).Window / 2
			quota := algorithms.PolicyOf(p).Quota
			for _, q := range family {
				if p == q {
					continue
				}
				for name, store := range stores {
					st := store(t)
					now, alone := bases[0], bases[0]
					switched, single := planLimiter(t, st, p, &now, 0), planLimiter(t, st, p, &alone, 0)
					for _, lim := range []*limiter.Limiter{switched, single} {
						if got, _ := admit(t, lim, p, quota+1); got != quota {
							t.Fatalf("%v on %s: admitted %d of %d, want %d", p, name, got, quota+1, quota)
						}
					}
					now, alone = now.Add(half), alone.Add(half)
					if got, _ := admit(t, switched, q, 10); got > algorithms.PolicyOf(q).Quota {
						t.Errorf("%v after %v on %s: admitted %d, above its quota", q, p, name, got)
					}
					got, _ := admit(t, switched, p, 10)
					want, _ := admit(t, single, p, 10)
					if got > want {
						t.Errorf("%v -> %v -> back on %s: admitted %d, more than the %d of %v alone", p, q, name, got, want, p)
					}
				}
			}
		}
	}
}

// A per-check algorithm is validated when first used, with an error naming
// the rule; the deny cache never answers one plan with another's denial,
// also where both count into one state (a bucket, GCRA).
func TestPerCheckAlgorithmErrorsAndDenyCache(t *testing.T) {
	_, c := redistest.Mini(t)
	lim := must(ruletest.Build(c, []limiter.Rule{{Name: "api", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}},
		limiter.WithClock(func() time.Time { return bases[0] }), redisstore.WithMinTTL(time.Hour)))
	_, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "a", Cost: 1, Plan: algorithms.GCRA{}})
	if !errors.Is(err, limiter.ErrCheck) || !errors.Is(err, algorithms.ErrInvalid) || !strings.Contains(err.Error(), `rule "api"`) {
		t.Errorf("invalid plan: %v, want ErrCheck naming the rule and the field", err)
	}
	for _, tc := range []struct{ free, paid algorithms.Algorithm }{
		{algorithms.FixedWindow{Limit: 1, Window: time.Hour}, algorithms.FixedWindow{Limit: 3, Window: time.Hour}},
		{algorithms.TokenBucket{Capacity: 1, Rate: 1, Period: time.Hour}, algorithms.TokenBucket{Capacity: 3, Rate: 3, Period: time.Hour}},
		{algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}, algorithms.GCRA{Rate: 3, Period: time.Hour, Burst: 3}},
	} {
		id := tc.free.String()
		for i, want := range []bool{true, false, false} { // the third is the deny cache's
			if d, _ := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: id, Cost: 1, Plan: tc.free}); d.Allowed != want || d.Cached != (i == 2) {
				t.Fatalf("%v request %d: %+v", tc.free, i, d)
			}
		}
		if d, _ := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: id, Cost: 1, Plan: tc.paid}); !d.Allowed || d.Cached {
			t.Errorf("%v request after %v denials: %+v, want Redis to admit it", tc.paid, tc.free, d)
		}
	}
}
