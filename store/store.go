package store

import (
	"context"
	"time"
)

// Store keeps rate-limit state and decides stacks of checks atomically.
// A zero now, wherever a method takes one, means the store's own clock
// (Redis TIME for Redis).
type Store interface {
	// Decide checks every entry of checks and, only if all allow,
	// consumes their costs. It writes one Result per check into results,
	// which the caller owns and makes as long as checks, and returns
	// whether the stack was allowed and the instant it was decided at.
	// Shadow checks (Check.Shadow) take no part in the verdict, all in the
	// same atomic step: the stack is allowed when every other check
	// allows, and a shadow check consumes its cost only when the stack is
	// allowed and it allows itself.
	// It must keep neither slice once it has returned (the Limiter reuses
	// them): a store that goes on in the background copies what it needs.
	Decide(ctx context.Context, now time.Time, checks []Check, results []Result) (Verdict, error)
	// Refund gives back, at now, units that Decide consumed at the instant
	// at, whatever was decided on the keys since: never more than a
	// decision of the smaller cost at the instant at would have left
	// (exactly that when nothing else happened to the keys), and nothing
	// while the refund's Mark says a Reset forgot the state since. Its
	// refunds may span hash tags. A zero at is a decision whose instant is
	// unknown, because its reply was lost: only a sliding log's or a
	// concurrency limit's units named by the decision's slot id
	// (Token.Stamp, the check's Slot) are given back, whatever their
	// instant; every other refund gives nothing.
	Refund(ctx context.Context, now, at time.Time, refunds []Refund) error
	// Block writes a block of d, from now, at key (a Check's Blocks). A
	// longer block in place is kept.
	Block(ctx context.Context, now time.Time, key Key, d time.Duration) error
	// Reset forgets keys, which share one hash tag with marks, and returns
	// how many held state. When one did, it writes each of marks, in the
	// same atomic step, lasting its TTL from now (a longer mark in place
	// is kept; a TTL under 1 µs writes none); when none did, it writes
	// nothing.
	Reset(ctx context.Context, now time.Time, keys []Key, marks []Mark) (int, error)
}

// Remote is a Store whose state is on a server it calls over a network,
// such as Redis (package redisstore). A Limiter puts a breaker in front of
// it (see limiter.WithRetryInterval) and, by default, a deny cache (see
// limiter.WithDenyCache).
type Remote interface {
	Store
	// Remote returns the longest one of the store's calls takes: timeouts
	// and lost connections mark the store down only once they have gone
	// on that long (see limiter.Limiter.Decide).
	Remote() (timeout time.Duration)
}
