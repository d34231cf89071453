package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// gcra is the specification of gcra.lua.
func gcra(a algorithms.GCRA, s State, now time.Time, cost int) Outcome {
	t, rate, period, c := now.UnixMicro(), int64(a.Rate), a.Period.Microseconds(), int64(cost)
	base := t
	if s.Exists {
		base = max(t, s.TAT)
	}
	debt := (base - t) * rate
	limit := int64(a.Burst) * period
	need := c * period
	status, retry := verdict(c, int64(a.Burst), debt+need <= limit, func() int64 { return exact.CeilDiv(debt+need-limit, rate) })
	after := exact.CeilDiv(debt+need, rate)
	return outcome(a.Burst, status, exact.FloorDiv(max(0, limit-debt), period), retry, base-t, State{TAT: t + after}, cost, after)
}

// meter is the specification of meter.lua, shared by token_bucket.lua and
// leaky_bucket.lua: a level in units scaled by period (µs) that drains rate
// points per µs, out of size*period.
func meter(s State, now time.Time, cost, size, rateInt int, periodD time.Duration) Outcome {
	t, rate, period, c := now.UnixMicro(), int64(rateInt), periodD.Microseconds(), int64(cost)
	capacity := int64(size) * period
	level, last := int64(0), t
	if s.Exists {
		level, last = min(capacity, max(0, s.Level)), s.Updated
	}
	if elapsed := t - last; elapsed > 0 {
		if elapsed >= exact.CeilDiv(level, rate) {
			level = 0
		} else {
			level -= elapsed * rate
		}
		last = t
	}
	need := c * period
	status, retry := verdict(c, int64(size), level+need <= capacity, func() int64 { return exact.CeilDiv(level+need-capacity, rate) })
	return outcome(size, status, exact.FloorDiv(capacity-level, period), retry, exact.CeilDiv(level, rate),
		State{Level: level + need, Updated: last}, cost, exact.CeilDiv(level+need, rate))
}
