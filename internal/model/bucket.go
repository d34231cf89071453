package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// meter is the specification of meter.lua, shared by token_bucket.lua and
// leaky_bucket.lua: a level in units scaled by period (µs) that drains rate
// points per µs, out of size*period (a token bucket's missing tokens). A
// state written under another Plan is decided by switchPlan.
func meter(s State, now time.Time, cost int, p Plan) Outcome {
	t, c := now.UnixMicro(), int64(cost)
	if s.Exists && s.Plan != p {
		return switchPlan(s, t, c, p)
	}
	capacity := p.Size * p.Period
	level, last := int64(0), t
	if s.Exists {
		level, last = min(capacity, s.Level), s.Updated
	}
	if t > last {
		level, last = drain(level, t-last, p.Rate), t
	}
	need := c * p.Period
	status, retry := verdict(c, p.Size, level+need <= capacity, func() int64 { return exact.CeilDiv(level+need-capacity, p.Rate) })
	q := quantities{remaining: exact.FloorDiv(capacity-level, p.Period), retry: retry, reset: exact.CeilDiv(level, p.Rate),
		next: nextUnit(level, p.Size, p.Rate, p.Period), after: exact.CeilDiv(level+need, p.Rate), nextAfter: nextUnit(level+need, p.Size, p.Rate, p.Period)}
	return lasting(s.keep(outcome(status, q, State{Level: level + need, Updated: last, Plan: p}, cost), t, t+q.after), t, last, q.after)
}

// lasting keeps the state o stores alive until its level has drained: for
// after µs from its last update, which is later than t when the clock
// stepped back (state stamped in the future, whose level does not drain
// before then). meter.lua's meter_commit does the same.
func lasting(o Outcome, t, last, after int64) Outcome {
	if o.Next.Exists && last > t {
		o.TTL = max(o.TTL, exact.CeilMillis(last-t+after))
	}
	return o
}

// nextUnit is the specification of verdict.lua's next_unit: the wait until
// one more unit fits a level of points (0 when it is empty).
func nextUnit(level, size, rate, period int64) int64 {
	if level <= 0 {
		return 0
	}
	capacity := size * period
	return exact.CeilDiv(level-capacity+(exact.FloorDiv(max(0, capacity-level), period)+1)*period, rate)
}
