package memstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestDifferentialGCRAPlans: one GCRA rule's requests carry its plans at
// random (other rates, periods and bursts), some settled later, with time
// passing and the state emptying now and then. The Lua scripts (miniredis
// and a real redis-server) decide and settle as the Go model does, store
// the string the model's state stands for, and admit nothing that the
// largest plan alone would refuse, each decision charged its final cost.
func TestDifferentialGCRAPlans(t *testing.T) {
	t.Parallel()
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			switches := 0
			for seed := range uint64(20) {
				switches += gcraDifferential(t, b.Client, 6000+seed, 300)
			}
			if switches < 500 {
				t.Errorf("only %d decisions under another plan than the state's", switches)
			}
		})
	}
}

// gcraPlans are a GCRA rule and three plans of it: the first has the
// largest burst and the largest rate (units per µs) of them all and a
// whole number of µs between units, so that it rounds nothing up.
func gcraPlans(rng *rand.Rand) []algorithms.GCRA {
	top := algorithms.GCRA{Rate: []int{1, 2, 4, 5, 8, 10, 20}[rng.IntN(7)], Period: 100 * time.Millisecond, Burst: 3 + rng.IntN(4)}
	plans := []algorithms.GCRA{top}
	for range 3 {
		p := algorithms.GCRA{Rate: 1 + rng.IntN(top.Rate), Period: []time.Duration{100, 150, 250}[rng.IntN(3)] * time.Millisecond, Burst: 1 + rng.IntN(top.Burst)}
		if rng.IntN(4) == 0 { // the top's rate and period, another burst
			p.Rate, p.Period = top.Rate, top.Period
		}
		plans = append(plans, p)
	}
	return plans
}

// gcraDifferential drives one GCRA key through random decisions under
// random plans and settlements (of any decision still pending, at a final
// cost below its cost) on the Lua scripts on rdb and the Go model in a
// memstore, with one passed-in clock, and fails at the first difference.
// It returns how many decisions were made under another plan than the
// one the state was written under.
func gcraDifferential(t *testing.T, rdb *redis.Client, seed uint64, steps int) (switches int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 19))
	plans := gcraPlans(rng)
	top := plans[0]
	rules := []limiter.Rule{{Name: "g", Algorithm: plans[rng.IntN(len(plans))]}}
	now := time.UnixMicro(1_790_000_000_000_000 + rng.Int64N(exact.MaxTime.UnixMicro()-1_790_000_000_000_000))
	lua, spec, mem, key := luaAndModel(t, rdb, &now, "gdiff", rules)
	type charged struct {
		pair
		plan        algorithms.GCRA
		at          time.Time
		cost, final int
	}
	var admitted, pending []*charged
	span := algorithms.PolicyOf(top).Window.Microseconds()
	for step := range steps {
		switch rng.IntN(8) {
		case 0, 1: // same instant
		case 2, 3, 4:
			now = now.Add(time.Duration(rng.Int64N(span/8+1)) * time.Microsecond)
		case 5, 6:
			now = now.Add(time.Duration(rng.Int64N(span+1)) * time.Microsecond)
		default: // the state empties, often
			now = now.Add(time.Duration(rng.Int64N(3*span+1)) * time.Microsecond)
		}
		if len(pending) == 0 || rng.IntN(3) > 0 {
			plan := plans[rng.IntN(len(plans))]
			c := limiter.Check{Rule: "g", Identity: "x", Cost: 1 + rng.IntN(plan.Burst), Plan: plan}
			if st := memstore.StateAt(mem, key, now); st.Exists && st.Plan != (model.Plan{Rate: int64(plan.Rate), Period: plan.Period.Microseconds()}) {
				switches++
			}
			got, err := lua.Decide(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := spec.Decide(ctx, c)
			if shown(got) != shown(want) {
				t.Fatalf("seed %d step %d at %d µs, check %+v:\nlua   %+v\nmodel %+v", seed, step, now.UnixMicro(), c, got, want)
			}
			if got.Allowed {
				d := &charged{pair{got, want}, plan, now, c.Cost, c.Cost}
				admitted, pending = append(admitted, d), append(pending, d)
			}
		} else {
			i := rng.IntN(len(pending))
			d := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			final := rng.IntN(d.cost)
			before := memstore.StateAt(mem, key, now)
			_, gotErr := lua.Settle(ctx, d.got, final)
			_, wantErr := spec.Settle(ctx, d.want, final)
			if gotErr != nil || wantErr != nil {
				t.Fatalf("seed %d step %d: settled: lua %v, model %v", seed, step, gotErr, wantErr)
			}
			if after := memstore.StateAt(mem, key, now); after.TAT != before.TAT {
				d.final = final
			}
			got, _ := lua.Status(ctx, "g", "x")
			if want, _ := spec.Status(ctx, "g", "x"); shown(got) != shown(want) {
				t.Fatalf("seed %d step %d, %d of %d given back:\nlua   %+v\nmodel %+v", seed, step, d.cost-final, d.cost, got, want)
			}
		}
		// The key's string is the model's state; past its TTL the
		// memstore forgot it, where Redis keeps it an hour.
		if st := memstore.StateAt(mem, key, now); st.Exists {
			if got, want := rdb.Get(ctx, key).Val(), gcraString(st); got != want {
				t.Fatalf("seed %d step %d: stored %q, model %q", seed, step, got, want)
			}
		}
	}
	var alone model.State // the top plan alone, each decision at its final cost
	var expires int64
	for _, d := range admitted {
		if at := d.at.UnixMicro(); d.final > 0 {
			if alone.Exists && expires <= at {
				alone = model.State{}
			}
			o := model.Step(top, alone, d.at, d.final)
			if o.Status != model.Allowed {
				t.Fatalf("seed %d: %d admitted at %d µs under %v, more than %v alone admits", seed, d.final, at, d.plan, top)
			}
			alone, expires = o.Next, at+o.TTL.Microseconds()
		}
	}
	return switches
}

// gcraString is how gcra.lua stores st: the TAT, its epoch (none
// for 0), its ledger's three integers (0:0:0 for none) and the rate and
// period it was written under.
func gcraString(st model.State) string {
	l := st.Ledger
	return fmt.Sprintf("%d%s:%d:%d:%d:%d:%d", st.TAT, epochString(st), l.Refunded, l.Until, l.Since, st.Plan.Rate, st.Plan.Period)
}

// epochString is how ledger.lua stores st's epoch, "#<epoch>" (nothing
// for 0), and its seen, "@<seen>" (nothing for 0: a bucket's).
func epochString(st model.State) string {
	s := ""
	if st.Epoch != 0 {
		s = fmt.Sprintf("#%d", st.Epoch)
	}
	if st.Seen != 0 {
		s += fmt.Sprintf("@%d", st.Seen)
	}
	return s
}
