package limiter

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/lease"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// RuleResult is one rule's part of a Decision.
type RuleResult struct {
	// Rule is the rule's name.
	Rule string
	// Policy is the rule's quota and window, for headers.
	Policy algorithms.Policy
	algorithms.Result
	// Token is what the store needs to give this rule's consumption back
	// (see Limiter.Settle); stores fill it, callers leave it alone.
	Token store.Token
	// Leased is how many units a leased check (store.Check.LeaseUnits) took
	// beyond its cost; the store fills it.
	Leased int
	// Blocked is true when the rule denied because the client is blocked
	// (by Limiter.Block, or by the rule's Penalty after this denial).
	Blocked bool
	// Undecided is true when the rule was not asked: another rule denied
	// the stack first without the store (a leased rule's local denial, or
	// the deny cache). It reports Allowed, and nothing it reports is a
	// verdict on this request.
	Undecided bool
	// Shadow is true for a shadow rule's result (Rule.Shadow): Allowed is
	// its own verdict, which the Decision's Allowed and RetryAfter leave
	// out. Allowed false is a would-be refusal, with its RetryAfter; the
	// rule then consumed nothing.
	Shadow bool
	// settled is set, atomically, in a decision's first result once Settle
	// (also Wait's, at 0) has claimed the decision: copies of a Decision
	// share its Results, so a decision is settled once. (The flags sit
	// together: a result is allocated per rule decided.)
	settled uint32
	// lease is where a leased rule's units came from, for Settle.
	lease *lease.Lease[store.Check]
	// check is what was decided, for Settle.
	check decided
}

// decided is what Settle needs of a decided check, beside its rule (whose
// name and blocks it takes again: see rule.blocks) and the result's
// Shadow: the parts of its key that are not the rule's, its algorithm
// (the rule's or a plan's) and its cost.
type decided struct {
	prefix, identity string
	alg              algorithms.Algorithm
	cost             int
}

// Refused reports whether the rule refused the request: it denied, and
// it is not a shadow rule (whose denial is a would-be refusal). Code that
// lists the rules that refused a Decision, a deny handler's say, reads
// this rather than Allowed.
func (r *RuleResult) Refused() bool { return !r.Allowed && !r.Shadow }

// found copies what the store found for the rule's check.
func (r *RuleResult) found(s *store.Result) {
	r.Result, r.Blocked, r.Token, r.Leased = s.Result, s.Blocked, s.Token, s.Leased
}

// Decision is the outcome of a stack of checks.
type Decision struct {
	// Allowed is true when every check allowed, shadow rules' checks aside;
	// only then was anything consumed (and of a shadow rule, only when its
	// own result allowed too).
	Allowed bool
	// At is the instant the decision was made at: the Redis server's TIME
	// by default, so every app server reports the same instants.
	At time.Time
	// Results has one entry per check, in order. When the stack is denied,
	// a rule that would have allowed reports Allowed true and its unchanged
	// Remaining, and a rule not asked reports Undecided.
	Results []RuleResult
	// Fallback is true when the fallback store (WithFallback) decided,
	// because Redis failed or is considered down.
	Fallback bool
	// Cached is true when the deny cache answered (see WithDenyCache): the
	// results are those of the denial it remembers, waits shortened by the
	// time since, and its rules that allowed are Undecided.
	Cached bool
}

// RetryAfter is the longest RetryAfter among the denying rules, shadow
// rules aside: 0 when allowed, algorithms.Never when some rule can never
// admit the cost.
func (d Decision) RetryAfter() time.Duration {
	var wait time.Duration
	for i := range d.Results {
		if r := &d.Results[i]; r.Refused() {
			wait = max(wait, r.RetryAfter)
		}
	}
	return wait
}
