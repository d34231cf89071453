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
	gap := last - t
	q := quantities{remaining: exact.FloorDiv(capacity-level, p.Period), retry: later(retry, gap), reset: later(exact.CeilDiv(level, p.Rate), gap),
		next: later(nextUnit(level, p.Size, p.Rate, p.Period), gap), after: later(exact.CeilDiv(level+need, p.Rate), gap),
		nextAfter: later(nextUnit(level+need, p.Size, p.Rate, p.Period), gap)}
	return s.keep(outcome(status, q, State{Level: level + need, Updated: last, Plan: p}, cost), t, t+q.after)
}

// later is meter.lua's late: a wait w on a level that drains from its
// last update, gap µs after now (0 unless the clock stepped back and
// found it in the future: the level does not drain before it), counted
// from now. Waits of 0 (none) stay 0.
func later(w, gap int64) int64 {
	if w > 0 {
		return w + gap
	}
	return w
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
