package model

import (
	"math"
	"slices"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// TokenOf is the store.Token of a decision of cost that stored s, as
// stack.lua reports it: its Stamp is the window start written, for the
// fixed and sliding windows; the level just after the decision (points),
// for the buckets; the TAT just after it (µs), for GCRA and a queue; the
// decision's slot id (slot, 0 for none), for the sliding log and
// Concurrency; 0 for the others. Its Refunded is the state's
// Ledger.Refunded just after the decision, and its Epoch the state's, for
// the buckets, GCRA and a queue.
func TokenOf(alg algorithms.Algorithm, s State, slot int64) store.Token {
	switch alg.(type) {
	case algorithms.SlidingLog, algorithms.Concurrency:
		return store.Token{Stamp: slot}
	case algorithms.FixedWindow, algorithms.SlidingWindow:
		return store.Token{Stamp: s.Start}
	case algorithms.TokenBucket, algorithms.LeakyBucket:
		return store.Token{Stamp: s.Level, Refunded: s.Refunded, Epoch: s.Epoch}
	case algorithms.GCRA, algorithms.Queue:
		return store.Token{Stamp: s.TAT, Refunded: s.Refunded, Epoch: s.Epoch}
	}
	return store.Token{}
}

// Ledger is what the state of a draining rule (the buckets, GCRA, a queue)
// keeps about give-backs, so that a give-back never returns more than a
// smaller decision at the original instant would have left, whatever
// happened since. The zero Ledger (no give-back since the state was
// fresh, and no change of a bucket's or GCRA's Plan that still matters)
// is stored as nothing.
//
// The bound: after a decision at instant a left the level L (in points;
// for a TAT, its lead over a, in µs), the level at any later instant t is
// at least L - rate*(t-a) - R, where R is what was given back on the key
// in between: later admissions only raise it, draining lowers it by at
// most rate per µs, give-backs by what they gave. A smaller decision would
// have left every later level lower by the difference d, except where
// that would go below zero: so the difference at t is min(d, the lowest
// level since a), of which the bound is a lower bound. Exact when nothing
// else happened; never more than exact. A queue does better, exact in any
// order: its Ledger also keeps Holes (see queueRefund).
type Ledger struct {
	// Refunded is what give-backs returned (points, or µs of TAT) since
	// the state was fresh or since Since.
	Refunded int64
	// Until is an instant (µs) that no decision's token outlives: past it
	// every token's bound is 0, so the Ledger starts afresh. Decisions keep
	// the state alive until then, so Refunded is never forgotten while a
	// token could use it.
	Until int64
	// Since is when Refunded last started again from 0, because it reached
	// MaxRefunded or a bucket's or GCRA's Plan changed; decisions made at
	// or before it get nothing back.
	Since int64
	// Holes is a queue's: its give-backs whose turns were still ahead of
	// now when last looked at (see queueRefund); nil for the others.
	Holes []Hole
}

// MaxRefunded bounds Ledger.Refunded: past it the count starts again, and
// earlier decisions give nothing back. Exact in Lua's float64.
const MaxRefunded = 1 << 52

// refund is how much of want (points or µs) a give-back for the decision at
// instant at with tok may return at t: at most the bound and the level
// now. mark is the decision's level in points (or its TAT's lead over at),
// draining rate per µs; own is what the decision itself added to it. A
// Ledger past its Until counts as fresh.
//
// The decision's level drains from at to seen, the latest instant the
// state has drained to (a bucket's last update, GCRA's or a queue's last
// write; t when later): on a clock that stepped back since a later
// decision, t would count less draining than the state has seen, and
// give back units that decision holds.
//
// Of what was given back on the key since the decision, only the part
// that came from decisions made before it can take the level below the
// decision's own: a later decision's give-back follows its own addition.
// That part is at most the level the earlier decisions held then, mark
// less own (each of their give-backs kept to this same bound), so the
// bound subtracts the smaller of the two.
func (l Ledger) refund(t, seen, at int64, tok store.Token, mark, own, want, level, rate int64) int64 {
	if l.Until <= t {
		l = Ledger{}
	}
	if at <= l.Since || l.Refunded < tok.Refunded {
		return 0
	}
	earlier := min(l.Refunded-tok.Refunded, max(0, mark-own))
	return max(0, min(want, level, drain(mark-earlier, max(t, seen)-at, rate)))
}

// record accounts for a give-back of g at t from a state whose level would
// otherwise have drained by horizon (µs). It reports whether Refunded
// started again from 0.
func (l *Ledger) record(t, g, horizon int64) (restarted bool) {
	if l.Until <= t {
		*l = Ledger{}
	}
	l.Until = max(l.Until, horizon)
	if l.Refunded += g; l.Refunded > MaxRefunded {
		l.Refunded, l.Since = 0, t
		return true
	}
	return false
}

// keep carries the Ledger of the state a decision read into the state o
// stores (none once past Until), which drains by horizon (µs), and keeps
// that state alive until the Ledger's Until.
func (l Ledger) keep(o Outcome, t, horizon int64) Outcome {
	if !o.Next.Exists || l.Until <= t {
		return o
	}
	l.Until = max(l.Until, horizon)
	o.Next.Ledger = l
	o.TTL = max(o.TTL, exact.CeilMillis(l.Until-t))
	return o
}

// drain is a level x after dt µs of draining rate points per µs: never
// below 0, and computed without a product above x.
func drain(x, dt, rate int64) int64 {
	switch {
	case x <= 0:
		return 0
	case dt <= 0:
		return x
	case dt >= exact.CeilDiv(x, rate):
		return 0
	}
	return x - dt*rate
}

// gcraIncrement is the TAT increment of an admitted cost: the cost's
// share, rounded up to 1 µs, whatever the TAT was (a TAT is a whole µs
// ahead of now).
func gcraIncrement(a algorithms.GCRA, cost int) int64 {
	return exact.CeilDiv(int64(cost)*a.Period.Microseconds(), int64(a.Rate))
}

// Refund is the specification of refund.lua: the state at now after giving
// back back of the cost units a decision at the instant at admitted with
// tok, whatever was decided on the key since. ttl is the state's new TTL,
// or 0 to keep the old one; a state that no longer Exists is deleted.
//
// The windows and the log give back exactly (their counts do not clamp);
// the buckets and GCRA give back what their Ledger's bound allows; a queue
// exactly the part of the decision's turns still ahead of now. The
// buckets, GCRA and a queue give nothing into a state of another
// epoch than the token's (State.Epoch).
//
// A zero at is a decision whose instant is unknown (its reply was lost),
// made no longer than within before now (0: no bound): only a slot id's
// units are given back (see unknownInstant).
func Refund(alg algorithms.Algorithm, s State, now, at time.Time, within time.Duration, cost, back int, tok store.Token) (next State, ttl time.Duration) {
	if !s.Exists {
		return s, 0
	}
	if at.IsZero() {
		earliest := int64(math.MinInt64)
		if within > 0 {
			earliest = now.UnixMicro() - within.Microseconds()
		}
		return unknownInstant(alg, s, earliest, cost, back, tok), 0
	}
	t, a, b := now.UnixMicro(), at.UnixMicro(), int64(back)
	switch alg.(type) {
	case algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.GCRA, algorithms.Queue:
		if s.Epoch != tok.Epoch {
			return s, 0
		}
	}
	switch alg := alg.(type) {
	case algorithms.FixedWindow:
		if s.Start == tok.Stamp {
			if s.Count <= b {
				return State{}, 0 // a window refunded to nothing is no window
			}
			s.Count -= b
		}
	case algorithms.SlidingWindow:
		switch w := alg.Window.Microseconds(); s.Start {
		case tok.Stamp:
			s.Count = max(0, s.Count-b)
		case tok.Stamp + w:
			s.Prev = max(0, s.Prev-b)
		}
	case algorithms.SlidingLog, algorithms.Concurrency:
		// With a slot id, the decision's own units cost-back+1..cost, if
		// still there: a refund sent again gives nothing more. Without,
		// units of one time are interchangeable: drop the last back of
		// those at a (the id-less ones first).
		kept := make([]Unit, len(s.Log))
		n := len(kept)
		for i := len(s.Log) - 1; i >= 0; i-- {
			u := s.Log[i]
			if tok.Stamp != 0 && u.At == a && u.Slot == tok.Stamp && u.I > int64(cost)-b ||
				tok.Stamp == 0 && u.At == a && b > 0 {
				if tok.Stamp == 0 {
					b--
				}
				continue
			}
			n--
			kept[n] = u
		}
		s.Log = kept[n:]
	case algorithms.TokenBucket:
		return meterRefund(s, t, a, int64(cost), b, tok, bucketPlan(alg.Capacity, alg.Rate, alg.Period)), 0
	case algorithms.LeakyBucket:
		return meterRefund(s, t, a, int64(cost), b, tok, bucketPlan(alg.Capacity, alg.Rate, alg.Period)), 0
	case algorithms.GCRA:
		if !underPlan(s, gcraPlan(alg)) {
			return s, 0
		}
		return tatRefund(s, t, a, gcraIncrement(alg, cost), gcraIncrement(alg, cost)-gcraIncrement(alg, cost-back), tok), 0
	case algorithms.Queue:
		return queueRefund(s, t, a, int64(cost)*queueTurn(alg), b*queueTurn(alg), tok), 0
	}
	return s, 0
}

// unknownInstant is the specification of sliding_log.lua's refund of a
// decision whose instant is unknown, but not before earliest (µs): a
// sliding log's or a concurrency limit's units cost-back+1..cost of the
// slot id tok.Stamp, whatever their instant since earliest (an id names
// one decision's units alone), if still there; nothing for a decision
// without an id, or of another algorithm, whose units are known only by
// their instant.
func unknownInstant(alg algorithms.Algorithm, s State, earliest int64, cost, back int, tok store.Token) State {
	switch alg.(type) {
	case algorithms.SlidingLog, algorithms.Concurrency:
		if tok.Stamp != 0 {
			s.Log = slices.DeleteFunc(slices.Clone(s.Log), func(u Unit) bool {
				return u.Slot == tok.Stamp && u.I > int64(cost-back) && u.At >= earliest
			})
		}
	}
	return s
}

// meterRefund gives back back units of a bucket decided under p at t: the
// level drained to t, lowered by what the Ledger allows (nothing when the
// state's Plan changed since the decision: see Ledger.switched).
func meterRefund(s State, t, at, cost, back int64, tok store.Token, p Plan) State {
	if !underPlan(s, p) {
		return s
	}
	level, last := min(p.Size*p.Period, s.Level), s.Updated
	if t > last {
		level, last = drain(level, t-last, p.Rate), t
	}
	g := s.Ledger.refund(t, last, at, tok, tok.Stamp, cost*p.Period, back*p.Period, level, p.Rate)
	if g == 0 {
		return s
	}
	s.Ledger.record(t, g, last+exact.CeilDiv(level, p.Rate))
	s.Level, s.Updated = level-g, last
	return s
}

// tatRefund moves GCRA's TAT back by what the Ledger allows of want µs at
// t, for a decision that moved it on by own µs (nothing when the state's
// Plan changed since the decision: see Ledger.switched).
func tatRefund(s State, t, at, own, want int64, tok store.Token) State {
	g := s.Ledger.refund(t, s.Seen, at, tok, tok.Stamp-at, own, want, s.TAT-t, 1)
	if g == 0 {
		return s
	}
	s.Ledger.record(t, g, s.TAT)
	s.TAT -= g
	return s
}

// underPlan reports whether a bucket's or GCRA's state s counts its level
// in p's units, as a give-back under p must: it was written under p. A
// state under another Plan gives nothing back to p's decisions, even
// where its Ledger does not say that the plan changed since (a state
// gone and written afresh, then a clock that stepped back).
func underPlan(s State, p Plan) bool {
	return s.Plan == p
}
