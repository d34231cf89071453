package limiter

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// ErrSettled is returned by Settle for a decision that was settled
// already, by Settle or by Wait (which settles it at 0 when its context
// ended): a decision is settled once, and a second Settle changes nothing.
var ErrSettled = errors.New("ratelimit: decision already settled")

// Settle charges an allowed decision's rules their final costs, once they
// are known (after the response): final[i] replaces the cost of
// d.Results[i]. Less than the cost gives the difference back (a login rule
// that charges every attempt and settles successes at 0 counts only
// failures; a reservation of the most a request can use gives back what it
// did not); more charges the difference as a further decision, which the
// rules may deny: the returned Decision says (Allowed true when nothing
// more was charged). Settling a denied decision changes nothing, and so
// does a final cost for a shadow rule whose result denied (it consumed
// nothing).
//
// A refund never returns more than a decision of the final cost at the
// original instant would have left, whatever happened since: exactly the
// difference while the rule's state has not emptied in between; for the
// buckets and GCRA, once the decision's own share has drained away (the
// bucket refilled while a long response ran) or other refunds took the
// level below it, only what is left of it; for a queue, exactly the part
// of the decision's turns still ahead, in any order (see "Settlement" in
// the package doc).
//
// A decision is settled once: copies of d share that fact, and a second
// Settle returns ErrSettled and changes nothing. Settle runs against the
// store that decided (the fallback, for a Decision.Fallback). A refund
// lost to a Redis failure is reported as an ErrBackend error and leaves
// the charge in place (stricter, never looser), with one exception: a
// concurrency limit's slot release that failed at the network (a failed
// dial, a timeout, a connection lost in use) is sent again in the
// background, with a backoff from 50 ms to 5 s, until it succeeds or the
// slot's TTL has passed, or until Close, which sends it one last time;
// failures of those retries are logged with slog.Default(), one line per
// 10 s at most, with counts. A release is idempotent: it removes the
// slots its decision's id (store.Check.Slot) names, so one that ran
// before its reply was lost, sent again, gives back nothing more. A
// release without an id (a store that returns none) gives back any slot
// of the decision's instant, and is sent again only when it surely did
// not run (a failed dial). Other refunds are never sent again.
func (l *Limiter) Settle(ctx context.Context, d Decision, final ...int) (Decision, error) {
	if !d.Allowed {
		return Decision{Allowed: true, At: d.At}, nil
	}
	if len(final) != len(d.Results) {
		return Decision{}, fmt.Errorf("%w: %d final costs for %d rules", ErrCheck, len(final), len(d.Results))
	}
	var refunds []store.Refund
	var extra []store.Check
	var names []checked
	for i, res := range d.Results {
		f, r := final[i], l.rules[res.Rule]
		c, a := l.storeCheck(r, &res)
		switch {
		case c.Key == (store.Key{}):
			return Decision{}, fmt.Errorf("%w: rule %q: not decided by this Limiter", ErrCheck, res.Rule)
		case f < 0:
			return Decision{}, fmt.Errorf("%w: rule %q: negative final cost %d", ErrCheck, res.Rule, f)
		case res.Shadow && !res.Allowed: // a would-be refusal consumed nothing
		case f < c.Cost && res.lease != nil: // restored below, once claimed
		case f < c.Cost:
			refunds = append(refunds, storeRefund(c, a, c.Cost-f, res.Token))
		case f > c.Cost:
			c.Cost = f - c.Cost
			extra = append(extra, c)
			names = append(names, checked{rule: r, algo: a})
		}
	}
	if !claim(d) {
		return Decision{}, ErrSettled
	}
	var err error
	if len(refunds) > 0 {
		err = l.release(ctx, d, refunds)
	}
	for i, res := range d.Results {
		if n := res.check.cost - final[i]; n > 0 && res.lease != nil {
			if e := l.refundLeases(ctx, res.lease.Restore(n, nil)); err == nil {
				err = e
			}
		}
	}
	if len(extra) == 0 {
		return Decision{Allowed: true, At: d.At}, err
	}
	more, moreErr := l.decideChecks(ctx, extra, make([]store.Result, len(extra)), names)
	if err == nil {
		err = moreErr
	}
	return more, err
}

// claim marks an allowed decision settled; it reports false when it was
// already.
func claim(d Decision) bool {
	return len(d.Results) > 0 && atomic.CompareAndSwapUint32(&d.Results[0].settled, 0, 1)
}

// storeRefund is the refund of back units of check c, decided with a,
// whose consumption tok names, with the Reset mark beside its state.
func storeRefund(c store.Check, a *algo, back int, tok store.Token) store.Refund {
	return store.Refund{Check: c, Back: back, Token: tok, Mark: resetMark(c.Key, a)}
}

// refund gives refunds of d back on the store that decided d (of d, it
// reads At and Fallback), at the limiter's clock.
func (l *Limiter) refund(ctx context.Context, d Decision, refunds []store.Refund) error {
	return refundError(ctx, l.sendRefunds(ctx, l.storeOf(d), d.At, refunds))
}

// release is refund for Settle: the slot releases among refunds that
// failed are sent again in the background (see package release).
func (l *Limiter) release(ctx context.Context, d Decision, refunds []store.Refund) error {
	s := l.storeOf(d)
	err := l.sendRefunds(ctx, s, d.At, refunds)
	if err != nil {
		l.releases.Retry(s, d.At, refunds, err, l.slotHold)
	}
	return refundError(ctx, err)
}

// slotHold is how long the slot rf releases is held at most: its TTL, and
// 0 for a refund that releases no slot.
func (l *Limiter) slotHold(rf store.Refund) time.Duration {
	if a := l.algoOf(rf.Check.Algorithm); a.facts.InFlight {
		return a.hold
	}
	return 0
}

// storeOf is the store that decided d: the fallback, for a
// Decision.Fallback.
func (l *Limiter) storeOf(d Decision) store.Store {
	if d.Fallback {
		return l.cfg.fallback
	}
	return l.store
}

// sendRefunds sends refunds of the decision at the instant at to s, at the
// limiter's clock. A store's failure is returned as it is, for
// package release to read (see refundError).
func (l *Limiter) sendRefunds(ctx context.Context, s store.Store, at time.Time, refunds []store.Refund) error {
	now, err := l.now()
	if err != nil {
		return err
	}
	return s.Refund(ctx, now, at, refunds)
}

// refundError is err, from sendRefunds, as the limiter returns it: a
// store's failure wrapped in ErrBackend.
func refundError(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrCheck) {
		return err
	}
	return callerError(ctx, err)
}
