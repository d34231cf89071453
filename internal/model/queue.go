package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// queue is the specification of queue.lua: the tail of the queue is kept
// in TAT; a request starts at max(TAT, now), takes cost turns of
// queueTurn µs each, and is allowed iff its last turn starts within
// MaxDelay.
func queue(a algorithms.Queue, s State, now time.Time, cost int) Outcome {
	t, c := now.UnixMicro(), int64(cost)
	maxDelay, turn := a.MaxDelay.Microseconds(), queueTurn(a)
	base := t
	if s.Exists {
		base = max(t, s.TAT)
	}
	wait := base - t
	var remaining int64
	if wait <= maxDelay {
		remaining = (maxDelay-wait)/turn + 1
	}
	quota := algorithms.PolicyOf(a).Quota // turns within MaxDelay of an empty queue
	status, retry := verdict(c, int64(quota), c <= remaining, func() int64 { return wait + (c-1)*turn - maxDelay })
	after := wait + c*turn
	q := quantities{remaining: remaining, retry: retry, reset: wait, next: queueNext(wait, maxDelay, turn),
		after: after, nextAfter: queueNext(after, maxDelay, turn), delay: wait}
	return s.keep(outcome(status, q, State{TAT: t + after}, cost), t, t+after)
}

// queueTurn is a unit's turn: the period's share, rounded up to 1 µs.
func queueTurn(a algorithms.Queue) int64 {
	return exact.CeilDiv(a.Period.Microseconds(), int64(a.Rate))
}

// queueNext is the time until one more turn starts within maxDelay, for a
// tail wait ahead (0 when all of them do already).
func queueNext(wait, maxDelay, turn int64) int64 {
	switch {
	case wait <= maxDelay%turn:
		return 0
	case wait > maxDelay:
		return wait - maxDelay
	}
	return turn - (maxDelay-wait)%turn
}
