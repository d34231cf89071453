package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// Plan is what a bucket's or GCRA's state was written under: a bucket's
// capacity (Size), Rate and Period (µs); GCRA's Rate and Period (see
// gcraPlan). Every plan of a rule shares one state; a decision under
// another Plan than the state's reads it as switchPlan (gcraSwitch) does,
// and a give-back of a decision made before the state's Plan last changed
// returns nothing (see Ledger.switched).
type Plan struct {
	Size, Rate, Period int64
}

// bucketPlan is the Plan of a bucket's parameters.
func bucketPlan(size, rate int, period time.Duration) Plan {
	return Plan{Size: int64(size), Rate: int64(rate), Period: period.Microseconds()}
}

// switchPlan is the specification of meter.lua's meter_switch: a cost c
// decided at t under p against a bucket's state s written under another
// Plan. The stored level drains at its own Plan's rate until the state is
// written again, so every wait is counted at that rate; its units in use,
// rounded up, carry over into p (2 of a capacity of 2 in use, then a
// capacity of 5: 3 more). So a client whose requests mix plans is
// admitted no more than a bucket of the largest capacity and the largest
// rate among them: units in use only round up, no level drains faster than
// that rate, and each admission fits its own capacity.
//
// The state written starts a Ledger (see switched): what was given back
// under the old Plan counted its units, not p's.
func switchPlan(s State, t, c int64, p Plan) Outcome {
	o := s.Plan
	level, last := min(o.Size*o.Period, s.Level), s.Updated
	if t > last {
		level, last = drain(level, t-last, o.Rate), t
	}
	status, used, remaining, retry, next := carry(level, c, p.Size, o)
	written := (used + c) * p.Period
	gap := last - t
	q := quantities{remaining: remaining, retry: later(retry, gap), reset: later(exact.CeilDiv(level, o.Rate), gap), next: later(next, gap),
		after: later(exact.CeilDiv(written, p.Rate), gap), nextAfter: later(nextUnit(written, p.Size, p.Rate, p.Period), gap)}
	l := s.Ledger.switched(t, last, level, o.Rate)
	return l.keep(outcome(status, q, State{Level: written, Updated: last, Plan: p}, int(c)), t, t+q.after)
}

// carry is the specification of verdict.lua's carry: the verdict on a
// cost c under a plan of size units against a level (points) written
// under the Plan o, which drains it o.Rate points per µs. Its units in
// use are rounded up; used is those of them that carry over, at most
// size (an admission needs used + c <= size). retry counts until c fits
// and next until one unit less is in use, or fewer than size, both at
// o's rate.
func carry(level, c, size int64, o Plan) (status Status, used, remaining, retry, next int64) {
	used = exact.CeilDiv(level, o.Period)
	status, retry = verdict(c, size, used+c <= size, func() int64 { return exact.CeilDiv(level-(size-c)*o.Period, o.Rate) })
	if level > 0 {
		next = exact.CeilDiv(level-(min(used, size)-1)*o.Period, o.Rate)
	}
	return status, min(used, size), max(0, size-used), retry, next
}

// switched is the Ledger a state written under a new Plan at t starts
// with, from the old state's Ledger and its level (drained to last, the
// instant written, at rate). A decision made under the old Plan can give
// back until the old level has drained and the old Ledger's Until has
// passed (see Ledger.Until); until then the new Ledger voids the
// give-backs of every decision made at or before last (Since), this one
// included, so that none gives back into units counted under another
// Plan. Past that, nothing can give back, and the state starts afresh.
func (l Ledger) switched(t, last, level, rate int64) Ledger {
	var until int64
	if l.Until > t {
		until = l.Until
	}
	if level > 0 {
		until = max(until, last+exact.CeilDiv(level, rate))
	}
	if until <= t {
		return Ledger{}
	}
	return Ledger{Until: until, Since: last}
}
