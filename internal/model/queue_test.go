package model_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

// turns is the reference a queue's give-backs are held to: every decision
// kept, in order, with the µs of turns it holds; the turns of each start
// when those before it end, or at its instant if the queue was empty.
type turns []turn

type turn struct {
	at, held int64 // µs: its instant, and the turns it holds
	cost     int
	alg      algorithms.Queue
	tok      store.Token
	settled  bool
}

// slot is a turn of a's, in µs.
func slot(a algorithms.Queue) int64 {
	return (a.Period.Microseconds() + int64(a.Rate) - 1) / int64(a.Rate)
}

// open lists the decisions not settled yet.
func (q turns) open() []int {
	var open []int
	for k, d := range q {
		if !d.settled {
			open = append(open, k)
		}
	}
	return open
}

// ends returns when the turns of decision k end, and when the last end.
func (q turns) ends(k int) (end, tail int64) {
	for i, d := range q {
		tail = max(tail, d.at) + d.held
		if i == k {
			end = tail
		}
	}
	return end, tail
}

// ahead counts the decisions holding turns that end after t.
func (q turns) ahead(t int64) int {
	n := 0
	for k, d := range q {
		if end, _ := q.ends(k); d.held > 0 && end > t {
			n++
		}
	}
	return n
}

// TestQueueGivesBackExactly: a queue decision settled below its cost
// gives back exactly the part of its turns given up that is still ahead
// of now, whatever the order of settlements, with time passing, the
// queue emptying and other decisions in between, under two plans of
// different rates on one key: the tail after each step is the reference's
// (each decision's turns start when the turns kept before it end). Just
// after a give-back, the holes the key keeps are never more than one
// beyond the decisions holding turns ahead of now.
func TestQueueGivesBackExactly(t *testing.T) {
	t.Parallel()
	plans := []algorithms.Queue{
		{Rate: 10, Period: 100 * time.Millisecond, MaxDelay: 150 * time.Millisecond},
		{Rate: 7, Period: 100 * time.Millisecond, MaxDelay: 150 * time.Millisecond},
	}
	var full, partial, none, withHoles, mostHoles int
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 31))
		now := time.UnixMicro(1_795_000_000_000_000 + rng.Int64N(1_000_000))
		if seed%2 == 1 {
			now = time.UnixMicro(8_678_000_000_000_000 + rng.Int64N(1_000_000)) // 16 digits, near 2^53
		}
		s := &keyState{}
		var ref turns
		for step := range 150 {
			switch rng.IntN(12) {
			case 0, 1, 2, 3, 4: // same instant
			case 5, 6, 7:
				now = now.Add(time.Duration(rng.Int64N(10_001)) * time.Microsecond) // within a turn
			case 8, 9, 10:
				now = now.Add(time.Duration(rng.Int64N(30_001)) * time.Microsecond) // within the queue
			default:
				now = now.Add(time.Duration(rng.Int64N(400_001)) * time.Microsecond) // past its tail, often
			}
			tm := now.UnixMicro()
			if open := ref.open(); rng.IntN(2) == 0 || len(open) == 0 {
				a := plans[rng.IntN(len(plans))]
				cost := 1
				if rng.IntN(2) == 0 {
					cost += rng.IntN(algorithms.PolicyOf(a).Quota)
				}
				if o, ok := s.decide(a, now, cost); ok {
					ref = append(ref, turn{at: tm, held: int64(cost) * slot(a), cost: cost, alg: a, tok: model.TokenOf(a, o.Next, 0)})
				}
			} else {
				k := open[len(open)-1-rng.IntN(min(len(open), 8))] // one of the last, mostly
				if rng.IntN(4) == 0 {
					k = open[rng.IntN(len(open))]
				}
				d := &ref[k]
				d.settled = true
				back := 1 + rng.IntN(d.cost)
				end, _ := ref.ends(k)
				want := max(0, min(int64(back)*slot(d.alg), end-tm))
				before := s.tail(tm)
				s.refund(d.alg, now, time.UnixMicro(d.at), d.cost, back, d.tok)
				if got := before - s.tail(tm); got != want {
					t.Fatalf("seed %d step %d at %d: %d turns of %d given back, their decision's ending %d µs ahead: gave %d µs, want %d\nstate %+v",
						seed, step, tm, back, d.cost, end-tm, got, want, s.st)
				}
				d.held -= want
				switch {
				case want == 0:
					none++
				case want == int64(back)*slot(d.alg):
					full++
				default:
					partial++
				}
				if n := len(s.state(tm).Holes); n > 0 && want > 0 {
					withHoles++
					mostHoles = max(mostHoles, n)
					if limit := ref.ahead(tm) + 1; n > limit {
						t.Fatalf("seed %d step %d: %d holes kept, %d decisions hold turns ahead", seed, step, n, limit-1)
					}
				}
			}
			if _, tail := ref.ends(len(ref) - 1); max(tail, tm) != s.tail(tm) {
				t.Fatalf("seed %d step %d at %d: tail %d, want %d\nstate %+v", seed, step, tm, s.tail(tm), max(tail, tm), s.st)
			}
		}
	}
	t.Logf("give-backs: %d whole, %d in part, %d of nothing; %d left holes, at most %d", full, partial, none, withHoles, mostHoles)
	if full < 10_000 || partial < 1_000 || none < 1_000 || mostHoles < 3 {
		t.Errorf("too few cases exercised")
	}
}
