package limiter

import (
	"context"
	"errors"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/retry"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Slot releases that failed are sent again in the background (see
// Settle, and package retry): a release lost to a failure would hold its
// slot for the rule's whole TTL. A release with a slot id (see slotid.go)
// removes its own slots only, so it is sent again whenever it may not
// have run (a timeout, a lost connection, a failed dial); one without
// (decided by a store that returns no id) only when it surely never ran
// (see retryable): it gives back any slot of its instant, so it runs
// once. Beyond retry.MaxPending pending releases, a failed one is dropped
// (counted and logged) and its slot comes back at its TTL.

// retryReleases queues refunds of the decision at the instant at, on s,
// to be sent again until each succeeds or its slot's TTL (ttls) has
// passed.
func (l *Limiter) retryReleases(s store.Store, at time.Time, refunds []store.Refund, ttls []time.Duration, cause error) {
	now, timeout := time.Now(), l.attemptTimeout(s)
	attempts := make([]*retry.Attempt, len(refunds))
	for i, rf := range refunds {
		attempts[i] = &retry.Attempt{
			Send:    func(ctx context.Context) error { return l.sendRefunds(ctx, s, at, []store.Refund{rf}) },
			Again:   func(err error) bool { return retryable(err, 0, rf) },
			Timeout: timeout,
			Until:   now.Add(ttls[i]),
		}
	}
	l.releases.Add(cause, attempts...)
}

// retryable reports whether rf, refund i of a Refund that failed with
// err, may be sent again: it surely never ran, or it has a slot id
// (Token.Stamp) and its failure was a network one (a timeout, a lost
// connection, a failed dial), after which it may or may not have run:
// sent again, it removes nothing more. Of a *fault.Refunds, refund i's own
// round trip's failure counts (none: it ran). A release without an id,
// and any other failure (a script's error, the clock), is not retried.
func retryable(err error, i int, rf store.Refund) bool {
	if fault.RefundUnsent(err, i) {
		return true
	}
	if rf.Token.Stamp == 0 {
		return false
	}
	var re *fault.Refunds
	if errors.As(err, &re) {
		if i >= len(re.Errs) || re.Errs[i] == nil {
			return false
		}
		err = re.Errs[i]
	}
	return fault.Weak(err) || fault.DialFailed(err)
}

// attemptTimeout bounds one attempt on s.
func (l *Limiter) attemptTimeout(s store.Store) time.Duration {
	if r, ok := s.(store.Remote); ok {
		return max(r.Remote(), retry.LastTry)
	}
	return retry.LastTry
}
