package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// queue is the specification of queue.lua: the tail of the queue is kept
// in TAT; a request starts at max(TAT, now) and moves the tail by its
// cost's share of the period, rounded up to 1 µs.
func queue(a algorithms.Queue, s State, now time.Time, cost int) Outcome {
	t, rate, period, c := now.UnixMicro(), int64(a.Rate), a.Period.Microseconds(), int64(cost)
	maxDelay, unit := a.MaxDelay.Microseconds(), exact.CeilDiv(period, rate)
	base := t
	if s.Exists {
		base = max(t, s.TAT)
	}
	wait := base - t
	remaining := queueSlots(wait, maxDelay, unit)
	status, retry := verdict(c, maxDelay/unit+1, wait <= maxDelay, func() int64 { return wait - maxDelay })
	after := wait + queueIncrement(a, cost)
	q := quantities{remaining: remaining, retry: retry, reset: wait, next: queueNext(wait, maxDelay, unit),
		after: after, nextAfter: queueNext(after, maxDelay, unit), delay: wait}
	o := outcome(algorithms.PolicyOf(a).Quota, status, q, State{TAT: t + after}, cost)
	if status == Allowed && cost > 0 {
		// Slots are counted from the new tail: a cost's share is rounded
		// to the microsecond, not to whole slots.
		o.Admitted.Remaining = int(queueSlots(after, maxDelay, unit))
	}
	return o
}

// queueSlots is how many unit requests can still start within maxDelay
// behind a tail wait ahead.
func queueSlots(wait, maxDelay, unit int64) int64 {
	if wait > maxDelay {
		return 0
	}
	return (maxDelay-wait)/unit + 1
}

// queueIncrement is how far an admitted cost moves the tail: its share of
// the period, rounded up to 1 µs.
func queueIncrement(a algorithms.Queue, cost int) int64 {
	return exact.CeilDiv(int64(cost)*a.Period.Microseconds(), int64(a.Rate))
}

// queueNext is the time until one more slot is free within maxDelay, for a
// tail wait ahead (0 when the queue is empty).
func queueNext(wait, maxDelay, unit int64) int64 {
	switch {
	case wait <= 0:
		return 0
	case wait > maxDelay:
		return wait - maxDelay
	}
	return unit - (maxDelay-wait)%unit
}
