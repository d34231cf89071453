package limiter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/denycache"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// ErrNotFound is returned by Reset and Unblock when there was nothing to
// forget: no state (or no block) under the rule and identity named. The
// call changed nothing; the usual cause is an identity other than the one
// the rule's key function returns (keyfunc.Header hashes its value), or a
// rule declared with another algorithm than the service's (see
// guard.Limits).
var ErrNotFound = errors.New("ratelimit: no state for this rule and identity")

// changed ends an operator's call that made the store forget or change a
// client's state: it tells the deny caches (see denycache.Changed), whether
// or not the store succeeded (a failure may have taken effect), and wraps
// a store failure.
func changed(ctx context.Context, err error) error {
	denycache.Changed()
	if err != nil {
		return callerError(ctx, err)
	}
	return nil
}

// forget deletes keys for an operator's call (see changed) and, when it
// deleted any, leaves each of marks, in the same store call, lasting its
// TTL from now: deleting none is ErrNotFound, naming the rule, and writes
// nothing.
func (l *Limiter) forget(ctx context.Context, rule string, now time.Time, keys []store.Key, marks []store.Mark) error {
	n, err := l.store.Reset(ctx, now, keys, marks)
	if err = changed(ctx, err); err == nil && n == 0 {
		err = fmt.Errorf("%w: rule %q", ErrNotFound, rule)
	}
	return err
}

// Status reports a rule's state for identity without consuming anything
// (a check of cost 0): the quota page of an account. A blocked client
// reports Blocked. For a plan, Decide a Check of cost 0 with that
// Plan.
func (l *Limiter) Status(ctx context.Context, rule, identity string) (Decision, error) {
	return l.Decide(ctx, Check{Rule: rule, Identity: identity})
}

// Reset forgets a rule's state for identity, and its block: the client
// starts afresh, on every instance (within the deny cache's maxAge; at once
// on this one). State kept under a plan with another window or TTL has
// keys of its own: name those algorithms too. When there was nothing to
// forget it returns ErrNotFound and writes nothing. Decisions made before
// the Reset and settled after it give nothing back, whichever limiter made
// them: in the store call that forgets, Reset leaves a mark beside each
// window's, log's or concurrency limit's state it forgets (one more key
// each, for twice the window in the state's key) that voids their
// refunds; a bucket's, GCRA's or a queue's decisions name the epoch of
// the state they wrote, which no state written after the Reset has.
func (l *Limiter) Reset(ctx context.Context, rule, identity string, plans ...algorithms.Algorithm) error {
	r, now, err := l.operand(rule, identity)
	if err != nil {
		return err
	}
	states := []*algo{r.algo}
	for _, alg := range plans {
		a := l.algoOf(alg)
		if a.err != nil {
			return fmt.Errorf("%w: rule %q: %w", ErrCheck, rule, a.err)
		}
		states = append(states, a)
	}
	keys := make([]store.Key, len(states), len(states)+1)
	var marks []store.Mark
	for i, a := range states {
		keys[i] = r.key(l.cfg.prefix, identity, a.suffix)
		if m := resetMark(keys[i], a); m != (store.Mark{}) {
			marks = append(marks, m)
		}
	}
	l.leases.Forget(keys...) // the states' pools
	keys = append(keys, r.key(l.cfg.prefix, identity, blockSuffix))
	return l.forget(ctx, rule, now, keys, marks)
}

// Block makes a Blockable rule (or one with a Penalty) deny identity for
// d, on every instance, whatever its algorithm says: a ban. The denials
// report Blocked, with RetryAfter the longer of the block's time left and
// the rule's own wait (when a request would be admitted). A longer block
// already in place is kept. d is at most 10 years, rounded up to whole
// microseconds.
func (l *Limiter) Block(ctx context.Context, rule, identity string, d time.Duration) error {
	r, now, err := l.operand(rule, identity)
	if err != nil {
		return err
	}
	if !r.blockable {
		return fmt.Errorf("%w: rule %q is not Blockable", ErrCheck, rule)
	}
	if d <= 0 || d > exact.MaxDuration {
		return fmt.Errorf("%w: rule %q: a block must last more than 0 and at most 10 years, not %v", ErrCheck, rule, d)
	}
	return changed(ctx, l.store.Block(ctx, now, r.key(l.cfg.prefix, identity, blockSuffix), exact.CeilMicros(d)))
}

// Unblock lifts identity's block on a rule, whether Block or a Penalty set
// it, leaving its other state alone; like Reset, at once on this instance,
// and ErrNotFound when the identity was not blocked.
func (l *Limiter) Unblock(ctx context.Context, rule, identity string) error {
	r, now, err := l.operand(rule, identity) // at now, a block that has ended is none
	if err != nil {
		return err
	}
	return l.forget(ctx, rule, now, []store.Key{r.key(l.cfg.prefix, identity, blockSuffix)}, nil)
}

// operand is the rule an operator's call names, with its identity
// checked, and the instant of the call (see now).
func (l *Limiter) operand(rule, identity string) (*rule, time.Time, error) {
	r := l.rules[rule]
	if r == nil {
		return nil, time.Time{}, fmt.Errorf("%w: no rule %q", ErrCheck, rule)
	}
	if identity == "" {
		return nil, time.Time{}, fmt.Errorf("%w: rule %q: empty identity", ErrCheck, rule)
	}
	now, err := l.now()
	return r, now, err
}
