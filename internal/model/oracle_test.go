package model_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// step is one thing that happened to a key, as the reference replays it.
type step struct {
	kind    stepKind
	alg     algorithms.Algorithm
	at      time.Time
	cost    int // the decision's cost, then its final cost once settled
	slot    int64
	tok     store.Token
	settled bool // settled already
}

type stepKind int8

const (
	looked  stepKind = iota // the key was read at the instant (it may expire)
	decided                 // an admitted decision
	reset                   // the key was forgotten
	drained                 // a bucket's give-back wrote its level drained to the instant
)

// TestGiveBacksNeverOverAdmit: a bucket, GCRA or queue decides at random
// instants, the clock running on, jumping ahead or stepping back, and
// its decisions are settled at random final costs, in any order, with
// resets and expiries between. After every step, no cost is admitted
// that the reference refuses: the same key where each decision was made
// at its final cost, at its own instant, and nothing given back. Under
// one plan, with steps back; and under two plans of one unit (k times
// the rate over k times the period), without (where the reference, which
// rounds each switch's carry up, may refuse a final cost: that run
// stops).
func TestGiveBacksNeverOverAdmit(t *testing.T) {
	for _, plans := range []bool{false, true} {
		for kind := range 4 {
			for seed := range uint64(1500) {
				if err := overAdmits(kind, seed, plans, 60); err != nil {
					t.Fatalf("kind %d seed %d, two plans %v: %v", kind, seed, plans, err)
				}
			}
		}
	}
}

// overAdmits runs steps steps of algorithm kind (token bucket, leaky
// bucket, GCRA, queue) from seed, and returns the first over-admission.
func overAdmits(kind int, seed uint64, twoPlans bool, steps int) error {
	rng := rand.New(rand.NewPCG(seed, uint64(kind)))
	n := func() int { return 1 + rng.IntN(6) }
	d := func() time.Duration {
		return []time.Duration{7 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, time.Second}[rng.IntN(4)]
	}
	k := 2 + rng.IntN(2)
	var plans []algorithms.Algorithm
	switch kind {
	case 0:
		a := algorithms.TokenBucket{Capacity: n(), Rate: n(), Period: d()}
		plans = []algorithms.Algorithm{a, algorithms.TokenBucket{Capacity: n(), Rate: a.Rate * k, Period: a.Period * time.Duration(k)}}
	case 1:
		a := algorithms.LeakyBucket{Capacity: n(), Rate: n(), Period: d()}
		plans = []algorithms.Algorithm{a, algorithms.LeakyBucket{Capacity: n(), Rate: a.Rate * k, Period: a.Period * time.Duration(k)}}
	case 2:
		a := algorithms.GCRA{Rate: n(), Period: d(), Burst: n()}
		plans = []algorithms.Algorithm{a, algorithms.GCRA{Rate: a.Rate * k, Period: a.Period * time.Duration(k), Burst: n()}}
	case 3:
		if twoPlans {
			return nil // a queue keeps no plan
		}
		plans = []algorithms.Algorithm{algorithms.Queue{Rate: n(), Period: d(), MaxDelay: d()}}
	}
	if !twoPlans {
		plans = plans[:1]
	}
	w := int64(0)
	for _, p := range plans {
		w = max(w, algorithms.PolicyOf(p).Window.Microseconds())
	}
	now := time.UnixMicro(1_795_000_000_000_000 + rng.Int64N(w))
	var key keyState
	var history, admitted []*step
	slot := int64(1000)
	for i := range steps {
		now = wander(rng, now, w, !twoPlans)
		t := now.UnixMicro()
		history = append(history, &step{kind: looked, at: now})
		switch op := rng.IntN(10); {
		case op < 6 || len(admitted) == 0:
			alg := plans[rng.IntN(len(plans))]
			cost := 1 + rng.IntN(algorithms.PolicyOf(alg).Quota)
			slot++
			o := model.StepSlot(alg, key.state(t), now, cost, slot)
			if o.Status == model.Allowed {
				key.st, key.expires = o.Next, t+o.TTL.Microseconds()
				s := &step{kind: decided, alg: alg, at: now, cost: cost, slot: slot, tok: model.TokenOf(alg, o.Next, slot)}
				history, admitted = append(history, s), append(admitted, s)
			}
		case op < 9:
			s := admitted[rng.IntN(len(admitted))]
			if s.settled {
				continue
			}
			final := rng.IntN(s.cost)
			before := key.state(t)
			key.refund(s.alg, now, s.at, s.cost, s.cost-final, s.tok)
			s.cost, s.settled = final, true
			if key.st.Updated != before.Updated || key.st.Level != before.Level {
				history = append(history, &step{kind: drained, at: now})
			}
		default:
			key = keyState{}
			history = append(history, &step{kind: reset, at: now})
		}
		ref, ok := replay(history)
		if !ok {
			if twoPlans {
				return nil
			}
			return fmt.Errorf("step %d: the reference refuses a final cost", i)
		}
		for _, p := range plans {
			for c := 1; c <= algorithms.PolicyOf(p).Quota; c++ {
				if model.Step(p, key.state(t), now, c).Status == model.Allowed && model.Step(p, ref.state(t), now, c).Status != model.Allowed {
					return fmt.Errorf("step %d at %d µs: %v admits %d, the reference refuses it\nstate     %+v\nreference %+v", i, t, p, c, key.st, ref.st)
				}
			}
		}
	}
	return nil
}

// wander moves now at random for a state whose window is w µs: not at
// all, ahead within an eighth of the window, within it or within three,
// and, when back, back within an eighth of the window or within five.
func wander(rng *rand.Rand, now time.Time, w int64, back bool) time.Time {
	us := func(n int64) time.Duration { return time.Duration(rng.Int64N(n+1)) * time.Microsecond }
	switch rng.IntN(7) {
	case 1:
		return now.Add(us(w / 8))
	case 2:
		return now.Add(us(w))
	case 3:
		return now.Add(us(3 * w))
	case 4:
		if back {
			return now.Add(-us(5 * w))
		}
	case 5, 6:
		if back {
			return now.Add(-us(w / 8))
		}
	}
	return now
}

// replay is the reference for history: each admitted decision made at its
// final cost, at its own instant, on a key read, reset and drained as it
// was, nothing given back. ok is false when it refuses a final cost.
func replay(history []*step) (ref keyState, ok bool) {
	for _, s := range history {
		t := s.at.UnixMicro()
		switch s.kind {
		case looked:
			ref.state(t)
		case decided:
			if s.cost == 0 { // the clock was read: a bucket drains to it
				drainTo(&ref, t)
				continue
			}
			o := model.StepSlot(s.alg, ref.state(t), s.at, s.cost, s.slot)
			if o.Status != model.Allowed {
				return ref, false
			}
			ref.st, ref.expires = o.Next, t+o.TTL.Microseconds()
		case reset:
			ref = keyState{}
		case drained:
			drainTo(&ref, t)
		}
	}
	return ref, true
}

// drainTo writes a bucket's level drained to t, as a give-back or a
// decision of cost 0 at t leaves it; GCRA's and a queue's state does not
// change.
func drainTo(k *keyState, t int64) {
	st := k.state(t)
	if st.Exists && st.TAT == 0 && t > st.Updated {
		p := st.Plan
		st.Level = max(0, min(p.Size*p.Period, st.Level)-(t-st.Updated)*p.Rate)
		st.Updated = t
		k.st = st
	}
}
