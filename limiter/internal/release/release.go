// Package release sends a Limiter's slot releases that failed again in
// the background (see limiter.Limiter.Settle, and package retry): a
// release lost to a failure would hold its slot for the rule's whole TTL.
// A release with a slot id (store.Check.Slot) removes its own slots only,
// so it is sent again whenever it may not have run (a timeout, a lost
// connection, a failed dial); one without (decided by a store that
// returns no id) only when it surely never ran (see Retryable): it gives
// back any slot of its instant, so it runs once. Beyond retry.MaxPending
// pending releases, a failed one is dropped (counted and logged) and its
// slot comes back at its TTL. The slots of a decision whose reply was
// lost are released here too (Lost), by id, their instant unknown.
package release

import (
	"context"
	"errors"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/retry"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Queue is the background retrier of a Limiter's slot releases. Its zero
// value, with Send set, is ready; Close (retry.Queue's) ends it.
type Queue struct {
	retry.Queue
	// Send makes one try of refunds of the decision at the instant at,
	// on s.
	Send func(ctx context.Context, s store.Store, at time.Time, refunds []store.Refund) error
}

// Retry queues the slot releases among refunds, of the decision at the
// instant at on s, that failed with err and may be sent again (see
// Retryable), each until it succeeds or its slot's TTL has passed: hold
// gives that TTL, and 0 for a refund that is not a slot release.
func (q *Queue) Retry(s store.Store, at time.Time, refunds []store.Refund, err error, hold func(store.Refund) time.Duration) {
	var again []store.Refund
	for i, rf := range refunds {
		if Retryable(err, i, rf) {
			again = append(again, rf)
		}
	}
	q.queue(s, again, err, hold, 1, func(ctx context.Context, rf store.Refund) error {
		return q.Send(ctx, s, at, []store.Refund{rf})
	})
}

// Lost queues the releases of the slots that checks, a decision on s
// that failed with err, took if it ran (fault.MayHaveRun): its reply was
// lost, so no request would ever release them. A Remote store's call
// lasts timeout at most, so the decision was sent no earlier than that
// before now (a zero timeout: unknown). Each release names its slot by id
// (store.Check.Slot; a check without one takes no slot) and is sent with
// an unknown instant (see store.Store.Refund), so one whose decision did
// not run removes nothing; in the background, and again while it fails at
// the network, until its slot's TTL (hold). Each try looks only at the
// units of the time since the decision was sent, and Slack more (Within):
// the clocks of the server and this process may step, but run at one rate.
//
// Each try is sent twice, the second once the first has been answered: a
// server that was busy serves the connections ready when it comes back in
// any order, so the first may run before a decision that waited there
// with it, and remove nothing; by the first's reply, that decision has
// run, and the second removes its slots. A try has the time of both.
func (q *Queue) Lost(s store.Store, checks []store.Check, err error, hold func(store.Refund) time.Duration, timeout time.Duration) {
	if !fault.MayHaveRun(err) {
		return
	}
	var refunds []store.Refund
	for _, c := range checks {
		if c.Slot != 0 {
			refunds = append(refunds, store.Refund{Check: c, Back: c.Cost, Token: store.Token{Stamp: c.Slot}})
		}
	}
	sent := time.Now().Add(-timeout)
	q.queue(s, refunds, err, hold, lostSends, func(ctx context.Context, rf store.Refund) error {
		for range lostSends {
			if timeout > 0 {
				rf.Within = time.Since(sent) + Slack
			}
			if err := q.Send(ctx, s, time.Time{}, []store.Refund{rf}); err != nil {
				return err
			}
		}
		return nil
	})
}

// lostSends is how many times each try of Lost sends its release.
const lostSends = 2

// Slack is what the bound of a lost decision's release (see Lost) adds to
// the time since the decision was sent: for the transit of the release
// and for the server's clock, read at a later moment than this
// process's.
const Slack = time.Second

// queue queues refunds, slot releases on s that failed with err, each sent
// by send in the background until it succeeds, fails in a way that
// forbids another try (see Retryable), or its slot's TTL (hold) has
// passed. Each try makes sends calls of s, and has the time of as many.
func (q *Queue) queue(s store.Store, refunds []store.Refund, err error, hold func(store.Refund) time.Duration, sends int, send func(context.Context, store.Refund) error) {
	now, timeout := time.Now(), time.Duration(sends)*attemptTimeout(s)
	var attempts []*retry.Attempt
	for _, rf := range refunds {
		ttl := hold(rf)
		if ttl <= 0 {
			continue
		}
		attempts = append(attempts, &retry.Attempt{
			Send:    func(ctx context.Context) error { return send(ctx, rf) },
			Again:   func(err error) bool { return Retryable(err, 0, rf) },
			Timeout: timeout,
			Until:   now.Add(ttl),
		})
	}
	if len(attempts) > 0 {
		q.Add(err, attempts...)
	}
}

// Retryable reports whether rf, refund i of a Refund that failed with
// err, may be sent again: it surely never ran, or it has a slot id
// (Token.Stamp) and its failure was a network one (a timeout, a lost
// connection, a failed dial), after which it may or may not have run:
// sent again, it removes nothing more. Of a *fault.Refunds, refund i's own
// round trip's failure counts (none: it ran). A release without an id,
// and any other failure (a script's error, the clock), is not retried.
func Retryable(err error, i int, rf store.Refund) bool {
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
func attemptTimeout(s store.Store) time.Duration {
	if r, ok := s.(store.Remote); ok {
		return max(r.Remote(), retry.LastTry)
	}
	return retry.LastTry
}
