package model_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

// TestRemainingIsExact: for every algorithm the limiter leases
// (internal/algo's Facts.Leasable, which its rule validation asks), in any
// state a decision reaches, a cost of exactly Remaining (before the
// request) is admitted and one more is not, which is what a lease's take
// relies on.
func TestRemainingIsExact(t *testing.T) {
	leased := 0
	for _, alg := range propertyAlgorithms {
		if f, _ := algo.FactsOf(alg); !f.Leasable {
			continue
		}
		leased++
		checked := 0
		for seed := range uint64(200) {
			rng := rand.New(rand.NewPCG(seed, 11))
			simulate(t, rng, alg, 200, func(st model.State, now time.Time, _ int, step model.Outcome) {
				rem := step.Held.Remaining
				if rem > 0 {
					checked++
					if got := model.Step(alg, st, now, rem).Status; got != model.Allowed {
						t.Fatalf("%v seed %d: cost %d (Remaining) is %v, want allowed; state %+v", alg, seed, rem, got, st)
					}
				}
				if got := model.Step(alg, st, now, rem+1).Status; got == model.Allowed {
					t.Fatalf("%v seed %d: cost %d (Remaining+1) is allowed; state %+v", alg, seed, rem+1, st)
				}
			})
		}
		if checked < 1000 {
			t.Errorf("%v: only %d states with quota remaining", alg, checked)
		}
	}
	if leased == 0 {
		t.Fatal("no algorithm is leasable")
	}
}

// TestTake is a step table of leases on a fixed window of 10: a lease
// takes up to its size, at most half of what remains beyond the cost, and
// nothing from a request that is denied or peeks.
func TestTake(t *testing.T) {
	alg := algorithms.FixedWindow{Limit: 10, Window: time.Second}
	now := time.UnixMicro(1_795_000_000_000_000)
	used := func(n int64) model.State {
		return model.State{Exists: true, Start: now.UnixMicro(), Count: n}
	}
	for _, tc := range []struct {
		name             string
		st               model.State
		cost, extra      int
		wantLease        int
		wantAllowed      bool
		wantRemainingNow int
	}{
		{"fresh, half of the 9 beyond the cost", model.State{}, 1, 100, 4, true, 5},
		{"fresh, a small lease fits whole", model.State{}, 1, 2, 2, true, 7},
		{"no lease asked", model.State{}, 1, 0, 0, true, 9},
		{"near exhaustion, nothing beyond the cost", used(8), 1, 100, 0, true, 1},
		{"two beyond the cost, one leased", used(7), 1, 100, 1, true, 1},
		{"a peek takes nothing", used(2), 0, 100, 0, true, 8},
		{"denied, nothing taken", used(10), 1, 100, 0, false, 0},
		{"a large cost, the rest halved", used(0), 6, 100, 2, true, 2},
	} {
		o, lease := model.Take(alg, tc.st, now, tc.cost, tc.extra, 0)
		res := o.Held
		if o.Status == model.Allowed {
			res = o.Admitted
		}
		if got := [3]any{lease, o.Status == model.Allowed, res.Remaining}; got != [3]any{tc.wantLease, tc.wantAllowed, tc.wantRemainingNow} {
			t.Errorf("%s: got lease, allowed, remaining %v, want %v", tc.name, got, [3]any{tc.wantLease, tc.wantAllowed, tc.wantRemainingNow})
		}
	}
}
