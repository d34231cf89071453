package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// Token is what Refund needs to give back an admitted cost, as stack.lua
// reports it: the window start written for the fixed and sliding windows,
// the TAT increment for GCRA and a queue, 0 for the others. s is the state the
// admission stored.
func Token(alg algorithms.Algorithm, s State, cost int) int64 {
	switch a := alg.(type) {
	case algorithms.FixedWindow, algorithms.SlidingWindow:
		return s.Start
	case algorithms.GCRA:
		return gcraIncrement(a, cost)
	case algorithms.Queue:
		return int64(cost) * queueSlot(a)
	}
	return 0
}

// gcraIncrement is the TAT increment of an admitted cost: the cost's
// share, rounded up to 1 µs, whatever the TAT was (a TAT is a whole µs
// ahead of now).
func gcraIncrement(a algorithms.GCRA, cost int) int64 {
	return exact.CeilDiv(int64(cost)*a.Period.Microseconds(), int64(a.Rate))
}

// RefundToken is the token refund.lua needs to give back back units of
// cost admitted with token: the same token, except for GCRA, whose
// increment for part of a cost (and a queue's) is the whole cost's less the
// rest's.
func RefundToken(alg algorithms.Algorithm, cost, back int, token int64) int64 {
	if back >= cost {
		return token
	}
	switch a := alg.(type) {
	case algorithms.GCRA:
		return token - gcraIncrement(a, cost-back)
	case algorithms.Queue:
		return int64(back) * queueSlot(a)
	}
	return token
}

// Refund is the specification of refund.lua: the state after giving back
// back units admitted at the instant at with token (RefundToken's),
// whatever was decided on the key since. ttl is the state's new TTL, or 0
// to keep the old one; a state that no longer Exists is deleted.
func Refund(alg algorithms.Algorithm, s State, at time.Time, back int, token int64) (next State, ttl time.Duration) {
	if !s.Exists {
		return s, 0
	}
	t, b := at.UnixMicro(), int64(back)
	switch a := alg.(type) {
	case algorithms.FixedWindow:
		if s.Start == token {
			if s.Count <= b {
				return State{}, 0 // a window refunded to nothing is no window
			}
			s.Count -= b
		}
	case algorithms.SlidingWindow:
		switch w := a.Window.Microseconds(); s.Start {
		case token:
			s.Count = max(0, s.Count-b)
		case token + w:
			s.Prev = max(0, s.Prev-b)
		}
	case algorithms.SlidingLog, algorithms.Concurrency:
		// Units of one time are interchangeable: drop back of those at t.
		kept := make([]int64, 0, len(s.Log))
		for _, u := range s.Log {
			if u == t && b > 0 {
				b--
				continue
			}
			kept = append(kept, u)
		}
		s.Log = kept
	case algorithms.TokenBucket:
		s.Level = meterRefund(s.Level, b, a.Capacity, a.Period, true)
	case algorithms.LeakyBucket:
		s.Level = meterRefund(s.Level, b, a.Capacity, a.Period, false)
	case algorithms.GCRA, algorithms.Queue:
		back := s.TAT - token
		if back <= t {
			return State{}, 0
		}
		s.TAT = back
		return s, max(time.Millisecond, exact.CeilMillis(back-t))
	}
	return s, 0
}

// meterRefund lowers a meter's stored level (tokens for a token bucket) by
// back units: exact, since the level drains linearly until empty.
func meterRefund(stored, back int64, size int, periodD time.Duration, tokens bool) int64 {
	period := periodD.Microseconds()
	capacity := int64(size) * period
	level := min(capacity, max(0, meterStored(stored, capacity, tokens)))
	return meterStored(max(0, level-back*period), capacity, tokens)
}
