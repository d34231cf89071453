package limiter_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// hourly are the leasable algorithms with an hour's quota of 50: against
// a lease of a second (a pacing interval of 100 ms), the store's waits
// once the quota is spent are a bucket's refill of 72 s a unit, or the
// window's end.
var hourly = []algorithms.Algorithm{
	algorithms.FixedWindow{Limit: 50, Window: time.Hour},
	algorithms.SlidingWindow{Limit: 50, Window: time.Hour},
	algorithms.TokenBucket{Capacity: 50, Rate: 50, Period: time.Hour},
	algorithms.LeakyBucket{Capacity: 50, Rate: 50, Period: time.Hour},
	algorithms.GCRA{Rate: 50, Period: time.Hour, Burst: 50},
}

// TestLeasedRefusalWaitsNoLessThanTheStore: a leased rule's refusals never
// report a shorter wait than the store would for the same state, on every
// leasable algorithm and every store. Two instances lease the rule, so
// that what a pool last saw of the store may be stale; requests of cost
// 1 to 3 go to either every few milliseconds, with pauses of up to 20
// minutes. At each refusal an unleased limiter asks the store for
// the same cost at the same instant: when the store refuses too, the
// leased refusal's RetryAfter and NextAfter are at least the store's;
// when it admits, its decision is settled back to nothing. Most refusals
// are the pool's own, made without asking the store.
func TestLeasedRefusalWaitsNoLessThanTheStore(t *testing.T) {
	t.Parallel()
	stores := map[string]store.Store{"memstore": memstore.Must()}
	for _, b := range redistest.Backends(t) {
		stores[b.Name] = mustStore(redisstore.New(b.Client, redisstore.WithMinTTL(time.Hour), exactnessTimeout))
	}
	for a, alg := range hourly {
		for name, s := range stores {
			for _, base := range bases {
				clk := newClock(base)
				prefix := limiter.WithPrefix("leasewait" + strconv.Itoa(a) + name + base.Format("2006"))
				counted := &counting{Store: s}
				leased := []limiter.Rule{{Name: "global", Algorithm: alg, Lease: time.Second}}
				fleet := []*limiter.Limiter{must(limiter.New(counted, leased, clk.option(), prefix)), must(limiter.New(counted, leased, clk.option(), prefix))}
				store := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: alg}}, clk.option(), prefix, limiter.WithDenyCache(0, 0)))
				rng := rand.New(rand.NewPCG(7, uint64(base.Year())))
				compared, local := 0, 0 // refusals compared, and those made without asking the store
			requests:
				for i := range 400 {
					switch k := rng.IntN(100); {
					case k < 1:
						clk.add(20 * time.Minute)
					case k < 4:
						clk.add(40 * time.Second)
					case k < 12:
						clk.add(150 * time.Millisecond)
					case k < 30:
						clk.add(20 * time.Millisecond)
					default:
						clk.add(time.Millisecond)
					}
					check := limiter.Check{Rule: "global", Identity: "all", Cost: 1 + rng.IntN(3)}
					asked := counted.decides.Load()
					d, err := fleet[rng.IntN(2)].Decide(ctx, check)
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						continue
					}
					refusedHere := counted.decides.Load() == asked
					ref, err := store.Decide(ctx, check)
					if err != nil {
						t.Fatal(err)
					}
					if ref.Allowed {
						if _, err := store.Settle(ctx, ref, 0); err != nil {
							t.Fatal(err)
						}
						continue
					}
					compared++
					if refusedHere {
						local++
					}
					got, want := d.Results[0], ref.Results[0]
					if got.RetryAfter < want.RetryAfter || got.NextAfter < want.NextAfter {
						t.Errorf("%v on %s %d, request %d of cost %d: leased refusal RetryAfter %v NextAfter %v, the store's %v and %v",
							alg, name, base.Year(), i, check.Cost, got.RetryAfter, got.NextAfter, want.RetryAfter, want.NextAfter)
						break requests
					}
				}
				for _, lim := range fleet {
					if err := lim.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if compared < 20 || local < 10 {
					t.Errorf("%v on %s %d: %d refusals compared, %d of them made without asking the store; want 20 and 10 or more",
						alg, name, base.Year(), compared, local)
				}
			}
		}
	}
}

// TestLeasedRefusalOfACostPastTheQuota: a request whose cost exceeds the
// rule's quota, refused by a paced pool, reports algorithms.Never, as the
// store would: waiting does not help.
func TestLeasedRefusalOfACostPastTheQuota(t *testing.T) {
	for _, alg := range hourly {
		quota := algorithms.PolicyOf(alg).Quota
		store := &counting{Store: memstore.Must()}
		lim := must(limiter.New(store, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: time.Second}}, fixedClock(bases[0])))
		// A take of all but one unit leaves too few to lease: the take is
		// short, and the pool paced.
		if d, err := lim.Decide(ctx, limiter.Check{Rule: "global", Identity: "all", Cost: quota - 1}); err != nil || !d.Allowed {
			t.Fatalf("%v: first request %+v, %v", alg, d, err)
		}
		asked := store.decides.Load()
		d, err := lim.Decide(ctx, limiter.Check{Rule: "global", Identity: "all", Cost: quota + 1})
		if err != nil {
			t.Fatal(err)
		}
		if got, local := d.RetryAfter(), store.decides.Load() == asked; d.Allowed || got != algorithms.Never || !local {
			t.Errorf("%v, cost %d: allowed %v, RetryAfter %v, refused without the store %v; want refused there, Never", alg, quota+1, d.Allowed, got, local)
		}
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeasedRuleWithAPlanThatCannotBeLeased: a check of a leased rule
// whose Plan cannot be leased (a sliding log) is decided by the store as
// an unleased check is: a client refused under that plan is told the
// store's wait, never a pool's.
func TestLeasedRuleWithAPlanThatCannotBeLeased(t *testing.T) {
	plan := algorithms.SlidingLog{Limit: 3, Window: time.Hour}
	for _, base := range bases {
		clk := newClock(base)
		s := memstore.Must()
		leased := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 50, Window: time.Hour}, Lease: time.Second}}, clk.option(), limiter.WithPrefix("leased")))
		plain := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 50, Window: time.Hour}}}, clk.option(), limiter.WithPrefix("plain")))
		for i := range 6 {
			check := limiter.Check{Rule: "global", Identity: "all", Cost: 1, Plan: plan}
			got, err := leased.Decide(ctx, check)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Decide(ctx, check)
			if err != nil {
				t.Fatal(err)
			}
			if got.Allowed != want.Allowed || got.RetryAfter() != want.RetryAfter() || got.Results[0].NextAfter != want.Results[0].NextAfter {
				t.Errorf("%d: request %d under %v: leased rule allowed %v, RetryAfter %v, NextAfter %v; unleased allowed %v, RetryAfter %v, NextAfter %v",
					base.Year(), i, plan, got.Allowed, got.RetryAfter(), got.Results[0].NextAfter, want.Allowed, want.RetryAfter(), want.Results[0].NextAfter)
			}
			clk.add(10 * time.Millisecond)
		}
		leased.Close()
	}
}

// TestLeasedRuleWithAnotherPlan: a lease pool holds units of one parameter
// set, the rule's; a check of a leased rule under another Plan (a bucket's
// or GCRA's, which share the rule's key) is decided by the store as an
// unleased check is, each time, and its refusals tell the store's wait.
func TestLeasedRuleWithAnotherPlan(t *testing.T) {
	rule := algorithms.GCRA{Rate: 50, Period: time.Hour, Burst: 50}
	plan := algorithms.GCRA{Rate: 5, Period: time.Hour, Burst: 5}
	for _, base := range bases {
		clk := newClock(base)
		counted := &counting{Store: memstore.Must()}
		lim := must(limiter.New(counted, []limiter.Rule{{Name: "global", Algorithm: rule, Lease: time.Second}}, clk.option()))
		plain := must(limiter.New(memstore.Must(), []limiter.Rule{{Name: "global", Algorithm: rule}}, clk.option()))
		for i := range 8 {
			check := limiter.Check{Rule: "global", Identity: "all", Cost: 1, Plan: plan}
			asked := counted.decides.Load()
			got, err := lim.Decide(ctx, check)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Decide(ctx, check)
			if err != nil {
				t.Fatal(err)
			}
			if counted.decides.Load() != asked+1 || got.Allowed != want.Allowed || got.RetryAfter() != want.RetryAfter() {
				t.Errorf("%d: request %d under %v: %d store calls, allowed %v, RetryAfter %v; unleased: allowed %v, RetryAfter %v",
					base.Year(), i, plan, counted.decides.Load()-asked, got.Allowed, got.RetryAfter(), want.Allowed, want.RetryAfter())
			}
			clk.add(10 * time.Millisecond)
		}
		lim.Close()
	}
}
