package model

import "github.com/seed-bff0c9e1/ratelimit/store"

// A queue's give-backs, exact in any order (refunds.qu in queue.lua).
//
// The turns ahead of now are the queue, in the order they were taken, and
// its tail is now plus their length. A decision's turns end at its token's
// stamp less what the decisions before it gave back since: each give-back
// moves the turns after it forward by its length, and leaves those before
// it where they are. What was given back since a decision is the Ledger's
// Refunded less the token's; the part of it that came from decisions
// after it is kept as Holes, so the rest, the part that moved its turns,
// is known exactly.
//
// Places: the tail plus Refunded is the same before and after a give-back,
// and grows with every decision by at least its turns; a decision's place
// is that sum just after it, its token's Stamp plus Refunded. A decision
// made after another has a larger place. Places are compared through
// differences (after), which stay exact in Lua's float64.

// Hole is a give-back recorded by a queue: the turns given back by one
// decision, or by adjacent ones, merged.
type Hole struct {
	// Stamp and Refunded are the token of the last decision it gave back
	// for: its place.
	Stamp, Refunded int64
	// Length is the µs given back, by decisions just before its place.
	Length int64
}

// after reports whether place a is after place b.
func (a Hole) after(b Hole) bool {
	return a.Stamp-b.Stamp > b.Refunded-a.Refunded
}

// queueRefund gives back, at t, up to want µs of the own µs of turns that
// a queue decision at the instant at took with tok: all the part of them
// still ahead of now (of the latest instant the queue was decided at, when
// the clock stepped back since: State.Seen), and never more. A token older than the Ledger (it
// was forgotten since, past its Until) has turns that ended before now:
// its earlier part is taken as at least 0, and it gets nothing.
func queueRefund(s State, t, at, own, want int64, tok store.Token) State {
	l := s.Ledger
	if l.Until <= t {
		l = Ledger{}
	}
	if at <= l.Since || l.Refunded < tok.Refunded {
		return s
	}
	place := Hole{Stamp: tok.Stamp, Refunded: tok.Refunded}
	later := int64(0)
	for _, h := range l.Holes {
		if h.after(place) {
			later += h.Length
		}
	}
	earlier := max(0, l.Refunded-tok.Refunded-later)
	g := max(0, min(want, s.TAT-t, drain(tok.Stamp-at-earlier, max(t, s.Seen)-at, 1)))
	if g == 0 {
		return s
	}
	if l.record(t, g, s.TAT) {
		l.Holes = nil // every token is at or before Since
	} else {
		l.Holes = holesAhead(withHole(l.Holes, place, own, g), t, l.Refunded)
	}
	s.Ledger, s.TAT = l, s.TAT-g
	return s
}

// withHole returns holes, in the order of their places, with the give-back
// of g µs by the decision at place, whose own µs of turns end there,
// added: merged with the hole that ends where those turns begin and with
// the one whose give-backs begin where they end. No decision that can
// still give back lies between merged holes, and for all others they
// count the same: before them, or after.
func withHole(holes []Hole, place Hole, own, g int64) []Hole {
	i := 0
	for i < len(holes) && place.after(holes[i]) {
		i++
	}
	h, lo, hi := place, i, i
	h.Length = g
	if lo > 0 {
		if b := holes[lo-1]; place.Stamp-b.Stamp == own+b.Refunded-place.Refunded {
			h.Length += b.Length
			lo--
		}
	}
	if hi < len(holes) {
		if a := holes[hi]; a.Stamp-place.Stamp == a.Length+place.Refunded-a.Refunded {
			h.Stamp, h.Refunded, h.Length = a.Stamp, a.Refunded, h.Length+a.Length
			hi++
		}
	}
	out := make([]Hole, 0, len(holes)+1-(hi-lo))
	out = append(append(append(out, holes[:lo]...), h), holes[hi:]...)
	return out
}

// holesAhead drops the holes whose place is behind t: where a hole's turns
// would have been, its Stamp less what was given back since its decision
// other than by the decisions after it (refunded is the Ledger's). Every
// decision before such a hole has its turns behind t, and gets nothing
// back whatever the hole says; places only grow, so those holes come
// first.
func holesAhead(holes []Hole, t, refunded int64) []Hole {
	later := int64(0)
	for i := len(holes) - 1; i >= 0; i-- {
		h := holes[i]
		if h.Stamp-t <= refunded-h.Refunded-later {
			return holes[i+1:]
		}
		later += h.Length
	}
	return holes
}
