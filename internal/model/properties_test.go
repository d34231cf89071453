package model_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

type admission struct {
	at   int64 // µs
	cost int
}

// simulate runs a random request sequence through alg's model the way a
// store does (write Next when admitted, forget state past its TTL) and
// calls check before every request with the state it is decided against.
func simulate(t *testing.T, rng *rand.Rand, alg algorithms.Algorithm, steps int, check func(st model.State, now time.Time, cost int, step model.Outcome)) []admission {
	t.Helper()
	w := algorithms.PolicyOf(alg).Window.Microseconds()
	now := time.UnixMicro(1_795_000_000_000_000 + rng.Int64N(w))
	var st model.State
	var expires int64
	var admitted []admission
	for range steps {
		switch rng.IntN(4) {
		case 0: // same instant
		case 1:
			now = now.Add(time.Duration(rng.Int64N(w/4+1)) * time.Microsecond)
		case 2:
			t := now.UnixMicro()
			now = time.UnixMicro(t + w - t%w - rng.Int64N(2)) // on or 1 µs before a boundary
		default:
			now = now.Add(time.Duration(rng.Int64N(2*w+1)) * time.Microsecond)
		}
		if st.Exists && expires <= now.UnixMicro() {
			st = model.State{}
		}
		cost := 1 + rng.IntN(algorithms.PolicyOf(alg).Quota)
		if rng.IntN(2) == 0 {
			cost = 1
		}
		step := model.Step(alg, st, now, cost)
		check(st, now, cost, step)
		if step.Held.Allowed {
			st, expires = step.Next, now.UnixMicro()+step.TTL.Microseconds()
			admitted = append(admitted, admission{now.UnixMicro(), cost})
		}
	}
	return admitted
}

var propertyAlgorithms = []algorithms.Algorithm{
	algorithms.FixedWindow{Limit: 5, Window: 100 * time.Millisecond},
	algorithms.SlidingLog{Limit: 5, Window: 100 * time.Millisecond},
	algorithms.SlidingWindow{Limit: 5, Window: 100 * time.Millisecond},
	algorithms.TokenBucket{Capacity: 5, Rate: 3, Period: 100 * time.Millisecond},
	algorithms.LeakyBucket{Capacity: 4, Rate: 7, Period: 100 * time.Millisecond},
	algorithms.GCRA{Rate: 3, Period: 100 * time.Millisecond, Burst: 5},
	algorithms.Queue{Rate: 3, Period: 100 * time.Millisecond, MaxDelay: 150 * time.Millisecond},
	algorithms.Concurrency{Limit: 4, TTL: 100 * time.Millisecond},
}

// TestNeverAdmitsMoreThanPromised checks each algorithm's promise over
// every window of admitted requests: aligned windows hold at most Limit
// (FixedWindow, SlidingWindow), any rolling window at most Limit
// (SlidingLog, Concurrency without releases), any interval d at most
// size + d*Rate/Period (buckets and GCRA), and turns a slot apart, none
// more than MaxDelay ahead (Queue).
func TestNeverAdmitsMoreThanPromised(t *testing.T) {
	t.Parallel()
	for _, alg := range propertyAlgorithms {
		for seed := range uint64(50) {
			rng := rand.New(rand.NewPCG(seed, 7))
			adm := simulate(t, rng, alg, 400, func(model.State, time.Time, int, model.Outcome) {})
			quota := algorithms.PolicyOf(alg).Quota
			w := algorithms.PolicyOf(alg).Window.Microseconds()
			for i := range adm {
				sum := 0
				for j := i; j < len(adm); j++ {
					sum += adm[j].cost
					d := adm[j].at - adm[i].at
					var bound int
					switch a := alg.(type) {
					case algorithms.FixedWindow, algorithms.SlidingWindow:
						if adm[j].at/w != adm[i].at/w {
							continue
						}
						bound = quota
					case algorithms.SlidingLog, algorithms.Concurrency:
						if d >= w { // entries never given back expire after w
							continue
						}
						bound = quota
					case algorithms.TokenBucket:
						bound = quota + int(d*int64(a.Rate)/a.Period.Microseconds())
					case algorithms.LeakyBucket:
						bound = quota + int(d*int64(a.Rate)/a.Period.Microseconds())
					case algorithms.GCRA:
						bound = quota + int(d*int64(a.Rate)/a.Period.Microseconds())
					case algorithms.Queue:
						// Turns start a slot apart, none further than
						// MaxDelay ahead.
						slot := (a.Period.Microseconds() + int64(a.Rate) - 1) / int64(a.Rate)
						bound = int((a.MaxDelay.Microseconds()+d)/slot) + 1
					}
					if sum > bound {
						t.Fatalf("%v seed %d: %d admitted in [%d, %d] µs, promise is %d", alg, seed, sum, adm[i].at, adm[j].at, bound)
					}
				}
			}
			if len(adm) == 0 {
				t.Fatalf("%v seed %d: nothing admitted", alg, seed)
			}
		}
	}
}

// TestRetryAfterIsHonest: when nothing else happens, a denied request made
// again RetryAfter later is admitted, and made 1 ms earlier than that is
// not. A cost that can never be admitted says Never.
func TestRetryAfterIsHonest(t *testing.T) {
	for _, alg := range propertyAlgorithms {
		denials := 0
		for seed := range uint64(50) {
			rng := rand.New(rand.NewPCG(seed, 11))
			simulate(t, rng, alg, 300, func(st model.State, now time.Time, cost int, step model.Outcome) {
				r := step.Held
				if r.Allowed {
					if r.RetryAfter != 0 {
						t.Fatalf("%v: allowed with RetryAfter %v", alg, r.RetryAfter)
					}
					return
				}
				denials++
				if r.RetryAfter <= 0 {
					t.Fatalf("%v: denied cost %d with RetryAfter %v", alg, cost, r.RetryAfter)
				}
				exactWait(t, fmt.Sprintf("%v seed %d at %d µs: cost %d admitted", alg, seed, now.UnixMicro(), cost), now, r.RetryAfter,
					func(at time.Time) bool { return model.Step(alg, st, at, cost).Held.Allowed })
			})
		}
		if denials < 100 {
			t.Fatalf("%v: only %d denials exercised", alg, denials)
		}
		if got := model.Step(alg, model.State{}, time.Now(), algorithms.PolicyOf(alg).Quota+1).Held; got.Allowed || got.RetryAfter != algorithms.Never {
			t.Errorf("%v: cost above the limit: %+v, want denied with RetryAfter Never", alg, got)
		}
	}
}

// TestNextAfterIsHonest: NextAfter is when more quota is first available
// than Remaining: a peek NextAfter later finds more remaining, a peek 1 ms
// earlier does not, and a rule with all its quota reports 0.
func TestNextAfterIsHonest(t *testing.T) {
	t.Parallel()
	for _, alg := range propertyAlgorithms {
		checked := 0
		for seed := range uint64(50) {
			rng := rand.New(rand.NewPCG(seed, 13))
			simulate(t, rng, alg, 300, func(st model.State, now time.Time, _ int, _ model.Outcome) {
				r := model.Step(alg, st, now, 0).Held
				if r.NextAfter == 0 {
					if quota := algorithms.PolicyOf(alg).Quota; r.Remaining != quota {
						t.Fatalf("%v seed %d: NextAfter 0 with %d of %d remaining", alg, seed, r.Remaining, quota)
					}
					return
				}
				checked++
				exactWait(t, fmt.Sprintf("%v seed %d at %d µs: more than %d remaining", alg, seed, now.UnixMicro(), r.Remaining), now, r.NextAfter,
					func(at time.Time) bool { return model.Step(alg, st, at, 0).Held.Remaining > r.Remaining })
			})
		}
		if checked < 100 {
			t.Fatalf("%v: only %d states with quota in use", alg, checked)
		}
	}
}

// exactWait checks a promised wait: what holds wait after now, and not 1 ms
// earlier (waits are rounded up to the millisecond).
func exactWait(t *testing.T, what string, now time.Time, wait time.Duration, holds func(at time.Time) bool) {
	t.Helper()
	if !holds(now.Add(wait)) {
		t.Fatalf("%s: not yet %v later", what, wait)
	}
	if holds(now.Add(wait - time.Millisecond)) {
		t.Fatalf("%s: already 1 ms before %v", what, wait)
	}
}
