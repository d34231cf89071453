package model_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

// bucketPlans are plans of one bucket that a client's requests may carry:
// the first has the largest capacity and the largest rate (units per µs)
// of them all; the periods differ.
func bucketPlans(bucket func(capacity, rate int, period time.Duration) algorithms.Algorithm) []algorithms.Algorithm {
	ms := time.Millisecond
	return []algorithms.Algorithm{bucket(5, 5, 100*ms), bucket(2, 2, 100*ms), bucket(3, 1, 50*ms),
		bucket(4, 7, 200*ms), bucket(5, 10, 200*ms), bucket(1, 3, 70*ms)}
}

func tokenBucket(capacity, rate int, period time.Duration) algorithms.Algorithm {
	return algorithms.TokenBucket{Capacity: capacity, Rate: rate, Period: period}
}

func leakyBucket(capacity, rate int, period time.Duration) algorithms.Algorithm {
	return algorithms.LeakyBucket{Capacity: capacity, Rate: rate, Period: period}
}

// gcraPlans are plans of one GCRA rule: the first has the largest burst
// and the largest rate of them all, and a whole number of µs between
// units (so that it rounds nothing up); some read more time as their
// tolerance (a burst of 3 at 1 per 50 ms: 150 ms, against 100 ms), one
// has the first's emission interval under another rate and period, one
// the first's rate and period under a smaller burst, and some intervals
// are not whole µs.
func gcraPlans() []algorithms.Algorithm {
	ms := time.Millisecond
	return []algorithms.Algorithm{algorithms.GCRA{Rate: 5, Period: 100 * ms, Burst: 5}, algorithms.GCRA{Rate: 2, Period: 100 * ms, Burst: 2},
		algorithms.GCRA{Rate: 1, Period: 50 * ms, Burst: 3}, algorithms.GCRA{Rate: 7, Period: 200 * ms, Burst: 4},
		algorithms.GCRA{Rate: 10, Period: 200 * ms, Burst: 5}, algorithms.GCRA{Rate: 5, Period: 100 * ms, Burst: 1},
		algorithms.GCRA{Rate: 3, Period: 70 * ms, Burst: 2}}
}

// queuePlans are plans of one queue: the first has the shortest turn and
// the longest MaxDelay of them all; the others wait longer turns, some of
// them within as long a MaxDelay.
func queuePlans() []algorithms.Algorithm {
	ms := time.Millisecond
	return []algorithms.Algorithm{algorithms.Queue{Rate: 5, Period: 100 * ms, MaxDelay: 150 * ms}, algorithms.Queue{Rate: 2, Period: 100 * ms, MaxDelay: 150 * ms},
		algorithms.Queue{Rate: 1, Period: 50 * ms, MaxDelay: 100 * ms}, algorithms.Queue{Rate: 7, Period: 200 * ms, MaxDelay: 0},
		algorithms.Queue{Rate: 3, Period: 70 * ms, MaxDelay: 150 * ms}}
}

// held is what a give-back can lower in a state: a bucket's level, or
// GCRA's and a queue's TAT.
func held(st model.State) [2]int64 { return [2]int64{st.Level, st.TAT} }

// TestPlanSwitchNeverOverAdmits: a client's requests carry any of several
// plans of one bucket, GCRA rule or queue, at random, with time passing,
// the state draining to empty and expiring, and give-backs of earlier
// decisions made under their own plans (the same as the state's or
// another). A decision made before the state last changed plans gives
// nothing back (a queue's state, a time, has no plan: its give-backs are
// exact under any). Under every plan, the state never admits a cost that
// the reference (every admitted decision charged its final cost at its
// own instant under its own plan, nothing given back; its whole cost when
// its give-back returned nothing) would refuse; and the admitted
// decisions, each at its final cost, are all admitted by the largest plan
// alone.
func TestPlanSwitchNeverOverAdmits(t *testing.T) {
	t.Parallel()
	for _, plans := range [][]algorithms.Algorithm{bucketPlans(tokenBucket), bucketPlans(leakyBucket), gcraPlans(), queuePlans()} {
		_, queue := plans[0].(algorithms.Queue)
		larger := plans[0]
		w := algorithms.PolicyOf(larger).Window.Microseconds()
		givenBack, switches := 0, 0
		for seed := range uint64(1000) {
			rng := rand.New(rand.NewPCG(seed, 29))
			now := time.UnixMicro(1_795_000_000_000_000 + rng.Int64N(w))
			s := &keyState{}
			plan := plans[0]
			var written model.Plan // the plan of the state's last write
			var switched time.Time // when the state last changed plans
			var admitted []*decision
			var refs reference
			for step := range 120 {
				now = advance(rng, now, w)
				if rng.IntN(3) == 0 {
					plan = plans[rng.IntN(len(plans))]
				}
				if rng.IntN(3) > 0 || len(admitted) == 0 {
					cost := 1 + rng.IntN(algorithms.PolicyOf(plan).Quota)
					if o, ok := s.decide(plan, now, cost); ok {
						if s.st.Plan != written {
							switched, written = now, s.st.Plan
							switches++
						}
						admitted = append(admitted, &decision{alg: plan, at: now, cost: cost, final: cost, tok: model.TokenOf(plan, o.Next, 0)})
					}
				} else {
					d := admitted[rng.IntN(len(admitted))]
					if d.settled {
						continue
					}
					d.settled = true
					d.final = rng.IntN(d.cost)
					refs.settled()
					before := held(s.state(now.UnixMicro()))
					s.refund(d.alg, now, d.at, d.cost, d.cost-d.final, d.tok)
					switch {
					case held(s.st) == before:
						d.final = d.cost // nothing given back: charged in full
					case d.at.Before(switched):
						t.Fatalf("seed %d step %d: a decision of %v made before the plan's switch at %d µs gave back", seed, step, d.alg, switched.UnixMicro())
					default:
						givenBack++
					}
				}
				ref, ok := refs.at(admitted, now)
				if !ok {
					t.Fatalf("%v seed %d step %d: the reference refuses a decision it charges less", plan, seed, step)
				}
				for _, p := range plans {
					for c := 1; c <= algorithms.PolicyOf(p).Quota; c++ {
						if model.Step(p, s.state(now.UnixMicro()), now, c).Status == model.Allowed &&
							model.Step(p, ref, now, c).Status != model.Allowed {
							t.Fatalf("seed %d step %d at %d: %v admits cost %d after give-backs, refused had each decision cost its final cost\nstate %+v\nreference %+v",
								seed, step, now.UnixMicro(), p, c, s.st, ref)
						}
					}
				}
			}
			alone := &keyState{}
			for _, d := range admitted {
				if _, ok := alone.decide(larger, d.at, d.final); d.final > 0 && !ok {
					t.Fatalf("seed %d: %v admitted %d at %d µs under %v, more than it alone admits", seed, larger, d.final, d.at.UnixMicro(), d.alg)
				}
			}
		}
		if givenBack < 1000 || switches < 10000 && !queue {
			t.Errorf("%v: only %d give-backs changed the state, and %d switches of plan", larger, givenBack, switches)
		}
	}
}

// A give-back returns nothing for a decision made before the state's plan
// last changed, nor for the decision that changed it, and gives back
// exactly for one made under the plan the state is in.
func TestGiveBackAcrossPlans(t *testing.T) {
	h := time.Hour
	for _, tc := range []struct{ free, paid algorithms.Algorithm }{
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: h}, algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: h}},
		{algorithms.GCRA{Rate: 2, Period: h, Burst: 2}, algorithms.GCRA{Rate: 5, Period: h, Burst: 5}},
	} {
		t0 := time.UnixMicro(1_795_000_000_000_000)
		s := &keyState{}
		var made []*decision
		for i, alg := range []algorithms.Algorithm{tc.free, tc.paid, tc.paid} {
			at := t0.Add(time.Duration(i) * time.Second)
			o, ok := s.decide(alg, at, 1)
			if !ok {
				t.Fatalf("decision %d under %v refused", i, alg)
			}
			made = append(made, &decision{alg: alg, at: at, cost: 1, tok: model.TokenOf(alg, o.Next, 0)})
		}
		now := t0.Add(time.Minute)
		for i, want := range []int{0, 0, 1} { // units back under the paid plan
			before := model.Step(tc.paid, s.state(now.UnixMicro()), now, 0).Held.Remaining
			d := made[i]
			s.refund(d.alg, now, d.at, d.cost, d.cost, d.tok)
			if got := model.Step(tc.paid, s.state(now.UnixMicro()), now, 0).Held.Remaining - before; got != want {
				t.Errorf("give-back of decision %d (%v): %d units back, want %d", i, d.alg, got, want)
			}
		}
	}
}

// TestPlanSwitchWaitsAreHonest: against a state another plan wrote, a
// denied request made again RetryAfter later is admitted and 1 ms earlier
// is not, and a peek NextAfter later finds more remaining and 1 ms
// earlier does not, as under the state's own plan.
func TestPlanSwitchWaitsAreHonest(t *testing.T) {
	for _, plans := range [][]algorithms.Algorithm{bucketPlans(tokenBucket), bucketPlans(leakyBucket), gcraPlans()} {
		denials, nexts := 0, 0
		for seed := range uint64(200) {
			rng := rand.New(rand.NewPCG(seed, 31))
			writer, reader := plans[rng.IntN(len(plans))], plans[rng.IntN(len(plans))]
			now := time.UnixMicro(1_795_000_000_000_000)
			s := &keyState{}
			for range 1 + rng.IntN(8) {
				now = now.Add(time.Duration(rng.Int64N(20_000)) * time.Microsecond)
				s.decide(writer, now, 1+rng.IntN(algorithms.PolicyOf(writer).Quota))
			}
			now = now.Add(time.Duration(rng.Int64N(20_000)) * time.Microsecond)
			st := s.state(now.UnixMicro())
			what := fmt.Sprintf("%v after %v, seed %d", reader, writer, seed)
			for c := 1; c <= algorithms.PolicyOf(reader).Quota; c++ {
				if r := model.Step(reader, st, now, c).Held; !r.Allowed {
					denials++
					exactWait(t, fmt.Sprintf("%s: cost %d admitted", what, c), now, r.RetryAfter,
						func(at time.Time) bool { return model.Step(reader, st, at, c).Held.Allowed })
				}
			}
			if r := model.Step(reader, st, now, 0).Held; r.NextAfter > 0 {
				nexts++
				exactWait(t, fmt.Sprintf("%s: more than %d remaining", what, r.Remaining), now, r.NextAfter,
					func(at time.Time) bool { return model.Step(reader, st, at, 0).Held.Remaining > r.Remaining })
			} else if quota := algorithms.PolicyOf(reader).Quota; r.Remaining != quota {
				t.Errorf("%s: NextAfter 0 with %d of %d remaining", what, r.Remaining, quota)
			}
		}
		if denials < 200 || nexts < 100 {
			t.Errorf("%v: only %d denials and %d waits for more exercised", plans[0], denials, nexts)
		}
	}
}
