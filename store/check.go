package store

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Check is one rule's part of a stacked decision, ready for a store.
type Check struct {
	// Key names the state; the Limiter builds it (see the limiter
	// package's Keys).
	Key Key
	// Algorithm is the rule's algorithm, already validated.
	Algorithm algorithms.Algorithm
	// Params is Algorithm and its parameters as the Lua scripts read them,
	// "<code>:<p1>:<p2>:<p3>": the Limiter encodes each algorithm once,
	// and a store that sends them to a server sends them as they are.
	Params string
	// Cost is the request's weight, >= 0.
	Cost int
	// Blocks is the key of the rule's block for the identity, or the zero
	// Key when the rule takes no blocks: while a block lasts, the rule
	// denies with Blocked set and RetryAfter the longer of the block's
	// time left and the rule's own wait.
	Blocks Key
	// Penalty, for a rule with Blocks, is how long a denial by the rule's
	// own algorithm blocks the client (0: none); a check of Cost 0 (a peek)
	// writes no block.
	Penalty time.Duration
	// LeaseUnits, when positive and Cost is too, asks for a quota lease
	// with the request: once the stack is allowed, up to LeaseUnits more
	// units are taken, no more than half of what remains beyond Cost, as
	// one consumption of Cost plus the lease (its Token refunds either).
	// Result.Leased says how many. A store that does not lease takes
	// none. Only for the algorithms whose units are fungible: the windows,
	// the buckets and GCRA.
	LeaseUnits int
	// Shadow makes the check a shadow check (limiter.Rule.Shadow): it is
	// decided and its Result reports its own verdict (a denial with its
	// RetryAfter), but it never denies the stack, consumes only when the
	// stack is allowed and it allows too, takes no lease, and writes no
	// block: its Penalty is not applied (a block in place still denies
	// it, in its Result).
	Shadow bool
	// Slot, when not 0, is the decision's id, a positive integer below
	// 2^52 (exact in a Lua number), unique among the decisions that may
	// write the key. For a sliding log or a concurrency limit it names the
	// units the check takes, and its Token (Token.Stamp) carries it, so
	// that a Refund gives back exactly those units and a Refund sent again
	// (after a reply was lost) gives back nothing more; a check without
	// one is refunded by its instant: any units of that instant, and twice
	// if sent twice. For a bucket, GCRA or a queue it names the state the
	// check writes where there is none or it holds no units (a level drained
	// to 0, a TAT not ahead of now), its epoch (Token.Epoch), so that a
	// Refund never gives into a state its decision did not write to; a
	// state so written by a check without one is of epoch 0, as an older
	// release's state is. The windows ignore it. The limiter gives
	// every check with a positive cost of those algorithms one.
	Slot int64
}

// Result is what a store found for one check of a stack.
type Result struct {
	algorithms.Result
	// Blocked is true when the check denied because the client is blocked
	// (by Store.Block, or by the check's Penalty after this denial).
	Blocked bool
	// Token is what Refund needs to give this check's consumption back;
	// zero when nothing was consumed.
	Token Token
	// Leased is how many units a leased check (Check.LeaseUnits) took beyond
	// its cost.
	Leased int
}

// Verdict is a stack's outcome: whether it was allowed (and its costs
// consumed) and the instant it was decided at.
type Verdict struct {
	Allowed bool
	At      time.Time
}
