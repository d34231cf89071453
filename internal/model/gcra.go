package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// gcraPlan is the Plan a GCRA's state is written under: its Rate and
// Period, which say what the TAT's lead over now counts in units. The
// burst changes nothing stored (Size is 0): plans that differ only by
// their burst read the state alike.
func gcraPlan(a algorithms.GCRA) Plan {
	return Plan{Rate: int64(a.Rate), Period: a.Period.Microseconds()}
}

// gcra is the specification of gcra.lua. Its TAT's lead over now, times
// the rate, is a level of points that drains rate points per µs, as a
// leaky bucket's of capacity burst. A state written under another Plan is
// decided by gcraSwitch.
func gcra(a algorithms.GCRA, s State, now time.Time, cost int) Outcome {
	p := gcraPlan(a)
	t, c, burst := now.UnixMicro(), int64(cost), int64(a.Burst)
	if s.Exists && s.Plan != p {
		return gcraSwitch(s, t, c, burst, p)
	}
	base := t
	if s.Exists {
		base = max(t, s.TAT)
	}
	debt := (base - t) * p.Rate
	limit := burst * p.Period
	need := c * p.Period
	status, retry := verdict(c, burst, debt+need <= limit, func() int64 { return exact.CeilDiv(debt+need-limit, p.Rate) })
	after := exact.CeilDiv(debt+need, p.Rate)
	q := quantities{remaining: exact.FloorDiv(max(0, limit-debt), p.Period), retry: retry, reset: base - t,
		next: nextUnit(debt, burst, p.Rate, p.Period), after: after, nextAfter: nextUnit(after*p.Rate, burst, p.Rate, p.Period)}
	return s.keep(outcome(status, q, State{TAT: t + after, Plan: p}, cost), t, t+after)
}

// gcraSwitch is the specification of gcra.lua's gcra_switch: a cost c
// decided at t under p, with a burst, against a GCRA state written under
// another Plan. The TAT's lead, in the writer's units, is carried over
// as a bucket's level is (see carry): rounded up, and draining at the
// writer's rate until the state is written again, so every wait is
// counted at that rate (2 units in use at 1 an hour, then 5 an hour with
// a burst of 5: 3 more, and a TAT 36 minutes ahead). So a client whose
// requests mix plans is admitted no more than a GCRA of the largest burst
// and the largest rate among them would admit, as for the buckets.
//
// The state written starts a Ledger (see Ledger.switched): what was
// given back under the old Plan was counted in its µs, not p's.
func gcraSwitch(s State, t, c, burst int64, p Plan) Outcome {
	lead := max(0, s.TAT-t)
	status, used, remaining, retry, next := carry(lead*s.Plan.Rate, c, burst, s.Plan)
	after := exact.CeilDiv((used+c)*p.Period, p.Rate)
	q := quantities{remaining: remaining, retry: retry, reset: lead, next: next,
		after: after, nextAfter: nextUnit(after*p.Rate, burst, p.Rate, p.Period)}
	// The Ledger voids every decision made by the latest instant the state
	// has seen, which a clock that stepped back puts after t.
	last := max(t, s.Seen)
	l := s.Ledger.switched(t, last, max(0, s.TAT-last), 1)
	return l.keep(outcome(status, q, State{TAT: t + after, Plan: p}, int(c)), t, t+after)
}
