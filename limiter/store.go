package limiter

import (
	"context"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Store keeps rate-limit state and decides stacks of checks atomically.
// Package redisstore runs the Lua scripts on Redis; package memstore keeps
// state in process with the algorithms' Go models. Both give the same
// results for the same inputs. A zero now, wherever a method takes one,
// means the store's own clock (Redis TIME for Redis).
type Store interface {
	// Decide checks every entry of checks and, only if all allow, consumes
	// their costs. It returns whether the stack was allowed, the instant it
	// was decided at, and one result per check in order, of which it fills
	// only the embedded algorithms.Result, Blocked and Token (the Limiter
	// names the rules). Shadow checks (StoreCheck.Shadow) take no part in
	// the verdict, all in the same atomic step: the stack is allowed when
	// every other check allows, and a shadow check consumes its cost only
	// when the stack is allowed and it allows itself. It must not keep
	// checks once it has returned (the Limiter reuses them): a store that
	// goes on in the background copies what it needs.
	Decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error)
	// Refund gives back, at now, units that Decide consumed at the instant
	// at, whatever was decided on the keys since: never more than a
	// decision of the smaller cost at the instant at would have left
	// (exactly that when nothing else happened to the keys). Its refunds
	// may span hash tags.
	Refund(ctx context.Context, now, at time.Time, refunds []StoreRefund) error
	// Block writes a block of d, from now, at key (a StoreCheck's Blocks).
	// A longer block in place is kept.
	Block(ctx context.Context, now time.Time, key string, d time.Duration) error
	// Delete forgets keys, which share one hash tag with marks, and
	// returns how many held state. When one did, it writes at each of
	// marks, in the same atomic step, a block lasting the TTL at the same
	// index from now (a Reset's mark: see StoreRefund.Resets; a longer one
	// in place is kept; a TTL under 1 µs writes none); when none did, it
	// writes nothing.
	Delete(ctx context.Context, now time.Time, marks []string, ttls []time.Duration, keys ...string) (int, error)
}

// StoreCheck is one rule's part of a stacked decision, ready for a store.
type StoreCheck struct {
	// Key names the state; the Limiter builds it (see the package doc).
	Key string
	// Algorithm is the rule's algorithm, already validated.
	Algorithm algorithms.Algorithm
	// Cost is the request's weight, >= 0.
	Cost int
	// Blocks is the key of the rule's block for the identity, or "" when
	// the rule takes no blocks: while a block lasts, the rule denies with
	// Blocked set and RetryAfter the longer of the block's time left and
	// the rule's own wait.
	Blocks string
	// Penalty, for a rule with Blocks, is how long a denial by the rule's
	// own algorithm blocks the client (0: none).
	Penalty time.Duration
	// Lease, when positive and Cost is too, asks for a quota lease with
	// the request: once the stack is allowed, up to Lease more units are
	// taken, no more than half of what remains beyond Cost, as one
	// consumption of Cost plus the lease (its Token refunds either).
	// RuleResult.Leased says how many. A store that does not lease takes
	// none. Only for the algorithms whose units are fungible: the windows,
	// the buckets and GCRA.
	Lease int
	// Shadow makes the check a shadow check (Rule.Shadow): it is decided
	// and its result reports its own verdict (a denial with its
	// RetryAfter), but it never denies the stack, consumes only when the
	// stack is allowed and it allows too, takes no lease, and writes no
	// block: its Penalty is not applied (a block in place still denies
	// it, in its result).
	Shadow bool
	// params identifies the algorithm and its parameters (set by the
	// Limiter).
	params string
}

// StoreRefund gives back part or all of an admitted check's cost.
type StoreRefund struct {
	// Check is the check as decided; its Cost is what was consumed.
	Check StoreCheck
	// Back is how many units to give back, 1 to Check.Cost.
	Back int
	// Token is the Decide result's Token for the check.
	Token Token
	// Resets is the key of the mark a Reset of the check's rule and
	// identity leaves, written like a block lasting MarkTTL (its value is
	// the Reset's instant plus MarkTTL), or "" for none to read: while the
	// mark lasts, a refund of a decision made at or before the Reset's
	// instant gives nothing.
	Resets string
	// MarkTTL is how long the mark lasts for the check's rule.
	MarkTTL time.Duration
}

// Token is what a store needs to give back a check's consumption: the
// store fills it in Decide (RuleResult.Token) and reads it in Refund.
// For the Lua scripts and the memstore, Mark is the window start written
// (fixed and sliding windows), the level or the TAT just after the
// decision (buckets, GCRA, queue), and Refunded what had been given back
// on the key by then.
type Token struct {
	Mark, Refunded int64
}

// Remote is a Store whose state is on a server it calls over a network,
// such as Redis (package redisstore). A Limiter puts a breaker in front of
// it (see WithRetryInterval) and, by default, a deny cache (see
// WithDenyCache).
type Remote interface {
	Store
	// Remote returns the longest one of the store's calls takes: timeouts
	// and lost connections mark the store down only once they have gone
	// on that long (see Limiter.Decide).
	Remote() (timeout time.Duration)
}
