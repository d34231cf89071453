package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// Plan is what a bucket's state was written under: its capacity (Size),
// Rate and Period (µs). Every plan of a bucket shares one state; a decision
// under another Plan than the state's reads it as switchPlan does, and a
// give-back of a decision made before the state's Plan last changed
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
	used := exact.CeilDiv(level, o.Period)
	status, retry := verdict(c, p.Size, used+c <= p.Size, func() int64 { return exact.CeilDiv(level-(p.Size-c)*o.Period, o.Rate) })
	var next int64
	if level > 0 { // until one unit less is in use, or fewer than p.Size
		next = exact.CeilDiv(level-(min(used, p.Size)-1)*o.Period, o.Rate)
	}
	written := (min(used, p.Size) + c) * p.Period
	q := quantities{remaining: max(0, p.Size-used), retry: retry, reset: exact.CeilDiv(level, o.Rate), next: next,
		after: exact.CeilDiv(written, p.Rate), nextAfter: nextUnit(written, p.Size, p.Rate, p.Period)}
	l := s.Ledger.switched(t, last, level, o.Rate)
	return l.keep(outcome(status, q, State{Level: written, Updated: last, Plan: p}, int(c)), t, t+q.after)
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
