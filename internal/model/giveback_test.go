package model_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

// keyState keeps one key's state the way a store does: written when admitted,
// forgotten past its TTL. Each call names the algorithm (the plan) it runs
// under.
type keyState struct {
	st      model.State
	expires int64
}

func (s *keyState) state(t int64) model.State {
	if s.st.Exists && s.expires <= t {
		s.st = model.State{}
	}
	return s.st
}

func (s *keyState) decide(alg algorithms.Algorithm, now time.Time, cost int) (model.Outcome, bool) {
	t := now.UnixMicro()
	o := model.Step(alg, s.state(t), now, cost)
	if o.Status == model.Allowed && cost > 0 {
		s.st, s.expires = o.Next, t+o.TTL.Microseconds()
	}
	return o, o.Status == model.Allowed
}

func (s *keyState) refund(alg algorithms.Algorithm, now, at time.Time, cost, back int, tok store.Token) {
	t := now.UnixMicro()
	next, ttl := model.Refund(alg, s.state(t), now, at, 0, cost, back, tok)
	switch {
	case !next.Exists:
		s.st = model.State{}
	case ttl > 0:
		s.st, s.expires = next, t+ttl.Microseconds()
	default:
		s.st = next
	}
}

// advance moves now on at random for a state whose window is w µs: not at
// all, within an eighth of the window, within it, or up to three windows
// (the state empties, often).
func advance(rng *rand.Rand, now time.Time, w int64) time.Time {
	switch rng.IntN(5) {
	case 1:
		return now.Add(time.Duration(rng.Int64N(w/8+1)) * time.Microsecond)
	case 2:
		return now.Add(time.Duration(rng.Int64N(w+1)) * time.Microsecond)
	case 3:
		return now.Add(time.Duration(rng.Int64N(3*w+1)) * time.Microsecond)
	}
	return now
}

// decision is an admitted decision that may be settled later.
type decision struct {
	alg         algorithms.Algorithm
	at          time.Time
	cost, final int
	tok         store.Token
	settled     bool
}

// reference is the state the admitted decisions leave when each is charged
// its final cost at its own instant, under its own algorithm, and nothing
// is ever given back.
//
// It is kept up to date as the tests go rather than replayed from the
// first decision at every step: a decision admitted since (at the latest
// instant, no earlier than any asked before) is charged on top of the
// replay so far, and a settlement, which changes an earlier decision's
// final cost, makes the next answer replay them all again. The answers
// are the full replay's: forgetting a state past its TTL at an instant
// and then deciding at a later one forgets it as deciding alone would,
// and the model's steps never change a state they read.
type reference struct {
	ref      keyState
	replayed int // admitted decisions charged into ref
}

// settled says that a decision's final cost changed.
func (r *reference) settled() { *r = reference{} }

// at is the reference state at now, false when it refuses a decision it
// charges less.
func (r *reference) at(admitted []*decision, now time.Time) (model.State, bool) {
	for ; r.replayed < len(admitted); r.replayed++ {
		d := admitted[r.replayed]
		if d.final == 0 {
			continue
		}
		if _, ok := r.ref.decide(d.alg, d.at, d.final); !ok {
			*r = reference{}
			return model.State{}, false
		}
	}
	return r.ref.state(now.UnixMicro()), true
}

// TestGiveBackNeverOverAdmits: whatever happens between a decision and
// its give-back (time passing, the state draining to empty and clamping,
// other decisions, other give-backs, expiry), the state never admits a
// cost that the reference (every admitted decision charged its final cost
// at its own instant, nothing given back) would refuse.
//
// This package's tests are computations over the models alone (no clock,
// no globals): the long ones run in parallel.
func TestGiveBackNeverOverAdmits(t *testing.T) {
	t.Parallel()
	for _, alg := range propertyAlgorithms {
		w := algorithms.PolicyOf(alg).Window.Microseconds()
		quota := algorithms.PolicyOf(alg).Quota
		givenBack, exactBacks := 0, 0
		for seed := range uint64(3000) {
			rng := rand.New(rand.NewPCG(seed, 23))
			now := time.UnixMicro(1_795_000_000_000_000 + rng.Int64N(w))
			s := &keyState{}
			var admitted []*decision
			var refs reference
			for step := range 120 {
				now = advance(rng, now, w)
				if rng.IntN(3) > 0 || len(admitted) == 0 {
					cost := 1 + rng.IntN(quota)
					o, ok := s.decide(alg, now, cost)
					if ok {
						admitted = append(admitted, &decision{alg: alg, at: now, cost: cost, final: cost, tok: model.TokenOf(alg, o.Next, 0)})
					}
				} else {
					d := admitted[rng.IntN(len(admitted))]
					if d.settled {
						continue
					}
					d.settled = true
					d.final = rng.IntN(d.cost)
					refs.settled()
					before := level(s, alg, now)
					s.refund(alg, now, d.at, d.cost, d.cost-d.final, d.tok)
					if level(s, alg, now) != before {
						givenBack++
					}
				}
				ref, ok := refs.at(admitted, now)
				if !ok {
					t.Fatalf("%v seed %d step %d: the reference refuses a decision it charges less", alg, seed, step)
				}
				for c := 1; c <= quota; c++ {
					if model.Step(alg, s.state(now.UnixMicro()), now, c).Status == model.Allowed &&
						model.Step(alg, ref, now, c).Status != model.Allowed {
						t.Fatalf("%v seed %d step %d at %d: cost %d admitted after give-backs, refused had each decision cost its final cost\nstate %+v\nreference %+v",
							alg, seed, step, now.UnixMicro(), c, s.st, ref)
					}
				}
			}
			// A lone decision settled at once gives back exactly.
			lone := &keyState{}
			o, _ := lone.decide(alg, now, quota)
			lone.refund(alg, now, now, quota, quota, model.TokenOf(alg, o.Next, 0))
			if got, want := model.Step(alg, lone.state(now.UnixMicro()), now, 0).Held.Remaining, quota; got != want {
				t.Fatalf("%v: a decision of %d given back at once leaves %d remaining, want %d", alg, quota, got, want)
			}
			exactBacks++
		}
		if givenBack < 300 {
			t.Errorf("%v: only %d give-backs changed the state", alg, givenBack)
		}
	}
}

// level is a comparable picture of a state at now: what a peek reports.
func level(s *keyState, alg algorithms.Algorithm, now time.Time) algorithms.Result {
	return model.Step(alg, s.state(now.UnixMicro()), now, 0).Held
}

// tail is where the queue at s ends at t (µs): t when it is empty.
func (s *keyState) tail(t int64) int64 {
	if st := s.state(t); st.Exists {
		return max(st.TAT, t)
	}
	return t
}
