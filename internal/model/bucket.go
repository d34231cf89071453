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
	q := quantities{remaining: exact.FloorDiv(max(0, limit-debt), period), retry: retry, reset: base - t,
		next: nextUnit(debt, a.Burst, rate, period), after: after, nextAfter: nextUnit(after*rate, a.Burst, rate, period)}
	return s.keep(outcome(a.Burst, status, q, State{TAT: t + after}, cost), t, t+after)
}

// meter is the specification of meter.lua, shared by token_bucket.lua and
// leaky_bucket.lua: a level in units scaled by period (µs) that drains rate
// points per µs, out of size*period. A token bucket (tokens) stores its
// tokens, capacity less level, as token_bucket.lua does: what carries over
// when the capacity changes.
func meter(s State, now time.Time, cost, size, rateInt int, periodD time.Duration, tokens bool) Outcome {
	t, rate, period, c := now.UnixMicro(), int64(rateInt), periodD.Microseconds(), int64(cost)
	capacity := int64(size) * period
	stored := func(x int64) int64 { return meterStored(x, capacity, tokens) }
	level, last := int64(0), t
	if s.Exists {
		level, last = min(capacity, max(0, stored(s.Level))), s.Updated
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
	q := quantities{remaining: exact.FloorDiv(capacity-level, period), retry: retry, reset: exact.CeilDiv(level, rate),
		next: nextUnit(level, size, rate, period), after: exact.CeilDiv(level+need, rate), nextAfter: nextUnit(level+need, size, rate, period)}
	return s.keep(outcome(size, status, q, State{Level: stored(level + need), Updated: last}, cost), t, t+q.after)
}

// meterStored converts a meter's level to what it stores and back (its own
// inverse): a token bucket stores its tokens, capacity less the level; a
// leaky bucket its level.
func meterStored(x, capacity int64, tokens bool) int64 {
	if tokens {
		return capacity - x
	}
	return x
}

// nextUnit is the specification of verdict.lua's next_unit: the wait until
// one more unit fits a level of points (0 when it is empty).
func nextUnit(level int64, size int, rate, period int64) int64 {
	if level <= 0 {
		return 0
	}
	capacity := int64(size) * period
	return exact.CeilDiv(level-capacity+(exact.FloorDiv(max(0, capacity-level), period)+1)*period, rate)
}
