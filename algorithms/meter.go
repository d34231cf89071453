package algorithms

import "time"

// meterStep is the executable specification of lib.lua's meter, shared by
// TokenBucket and LeakyBucket: a level in units scaled by period (µs) that
// drains rate points per µs, out of size*period.
func meterStep(s State, now time.Time, cost, size, rateInt int, periodD time.Duration) Step {
	t, rate, period, c := now.UnixMicro(), int64(rateInt), periodD.Microseconds(), int64(cost)
	capacity := int64(size) * period
	level, last := int64(0), t
	if s.Exists {
		level, last = min(capacity, max(0, s.Level)), s.Updated
	}
	if elapsed := t - last; elapsed > 0 {
		if elapsed >= ceilDiv(level, rate) {
			level = 0
		} else {
			level -= elapsed * rate
		}
		last = t
	}
	need := c * period
	status, retry := 1, int64(0)
	switch {
	case c > int64(size):
		status = -1
	case level+need > capacity:
		status, retry = 0, ceilDiv(level+need-capacity, rate)
	}
	return outcome(size, status, floorDiv(capacity-level, period), retry, ceilDiv(level, rate),
		State{Level: level + need, Updated: last}, cost, ceilDiv(level+need, rate))
}

// Step is the executable specification of token_bucket.lua.
func (a TokenBucket) Step(s State, now time.Time, cost int) Step {
	return meterStep(s, now, cost, a.Capacity, a.Rate, a.Period)
}

// Step is the executable specification of leaky_bucket.lua.
func (a LeakyBucket) Step(s State, now time.Time, cost int) Step {
	return meterStep(s, now, cost, a.Capacity, a.Rate, a.Period)
}
