// Package breaker marks a Remote store down on evidence that it is down,
// so that a Limiter's decisions fail at once, or go to a fallback store,
// instead of each waiting for the store's timeout.
package breaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// ErrUnavailable is the error of a decision that did not go to the store
// because it is marked down (limiter.ErrUnavailable).
var ErrUnavailable = errors.New("ratelimit: backend marked down")

// tripAfter is how many failures in a row mark the store down: one slow
// call or lost connection among successes must not turn every request away
// for a retry interval. Failures are counted once per round trip (the
// decisions of a coalesced pipeline that failed together are one failure),
// and a success resets the count.
const tripAfter = 3

// Breaker marks the store down on evidence that Redis is down, for Retry:
// meanwhile decisions go to the fallback store, or fail at once with
// ErrUnavailable; then one decision at a time probes the store, and the
// first success brings all decisions back. Transitions are logged with
// slog.Default(): down (with the cause) at Error, back up (with how long
// and how many decisions were answered without Redis) at Info.
//
// The evidence is tripAfter round trips failed in a row. A failed dial
// (nothing listens, the host is unreachable: see the Redis store), an error
// reply or any other failure trips it at the third; timeouts and
// connections lost in use only once such failures, with no success in
// between, have gone on for Timeout: one event (a pause, a CLIENT KILL)
// fails every call in flight at the same instant, and the next call, on a
// new connection, succeeds. A decision that its caller gave up (its
// context cancelled or past its deadline) says nothing of Redis and is not
// counted.
type Breaker struct {
	Store, Fallback Decider          // Fallback nil: fail fast while down
	Retry           time.Duration    // how long the store stays marked down before a probe
	Timeout         time.Duration    // how long timeouts and lost connections must go on to trip (the store's timeout)
	downUntil       atomic.Int64     // Unix nanoseconds; 0 while up
	probing         atomic.Bool      // one decision at a time probes a down store
	skipped         atomic.Int64     // decisions answered without the store while down
	failures        atomic.Int32     // round trips failed in a row while up
	firstFailure    atomic.Int64     // Unix nanoseconds of the first of them
	clock           func() time.Time // nil: time.Now (tests set it)

	mu    sync.Mutex // guards the transition's facts
	since time.Time
	cause error
}

// Decider is the part of a store.Store the breaker uses.
type Decider interface {
	Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error)
}

// Decide asks the store unless it is marked down. It returns the store's
// verdict, or the fallback's with fallback true (and the store's failure,
// nil when the store was skipped), or an ErrUnavailable error; the store
// that decided wrote results.
func (b *Breaker) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (v store.Verdict, fallback bool, err error) {
	until, ok := b.admit()
	if !ok {
		b.skipped.Add(1)
		return b.skip(ctx, now, checks, results)
	}
	if until != 0 {
		defer b.probing.Store(false)
	}
	v, err = b.Store.Decide(ctx, now, checks, results)
	switch {
	case err == nil:
		b.failures.Store(0)
		b.up(ctx)
		return v, false, nil
	case fault.GaveUp(ctx):
		return store.Verdict{}, false, err // the caller gave up: says nothing of Redis
	}
	switch {
	case until != 0 && b.downUntil.CompareAndSwap(until, b.clockNow().Add(b.Retry).UnixNano()):
		b.mu.Lock() // the probe failed: still down, retry later
		b.cause = err
		b.mu.Unlock()
	case b.fail(err):
		b.trip(ctx, err)
	}
	if b.Fallback == nil {
		return store.Verdict{}, false, err
	}
	return b.fall(ctx, now, checks, results, err)
}

// admit says whether a decision goes to the store: while it is up (until
// 0), or as the probe of a down store whose retry is due (until the state
// it probes; the decision holds the probe slot). The state is read again
// once the slot is held: a probe that ended in between (a failure that
// put the retry off, a success) changed it, and a decision that read it
// before must not probe on what it read.
func (b *Breaker) admit() (until int64, ok bool) {
	for {
		until = b.downUntil.Load()
		if until == 0 {
			return 0, true
		}
		if b.clockNow().UnixNano() < until || !b.probing.CompareAndSwap(false, true) {
			return until, false
		}
		if b.downUntil.Load() == until {
			return until, true
		}
		b.probing.Store(false) // a probe ended since: read its outcome
	}
}

// clockNow is the time on the breaker's clock.
func (b *Breaker) clockNow() time.Time {
	if b.clock == nil {
		return time.Now()
	}
	return b.clock()
}

// fail counts a failure, once per round trip, and reports whether it is
// the evidence that marks the store down: tripAfter failures in a row and,
// when this one is weak (a timeout, a lost connection), the first of them
// at least timeout ago.
func (b *Breaker) fail(err error) bool {
	if !fault.FirstOfRoundTrip(err) {
		return false
	}
	now := b.clockNow().UnixNano()
	n := b.failures.Add(1)
	if n == 1 {
		b.firstFailure.Store(now)
	}
	return n >= tripAfter && (!fault.Weak(err) || now-b.firstFailure.Load() >= int64(b.Timeout))
}

// skip answers a decision while the store is down.
func (b *Breaker) skip(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, bool, error) {
	if b.Fallback != nil {
		return b.fall(ctx, now, checks, results, nil)
	}
	b.mu.Lock()
	cause := b.cause
	b.mu.Unlock()
	return store.Verdict{}, false, fmt.Errorf("%w (last failure: %v)", ErrUnavailable, cause)
}

// fall decides with the fallback. The store may have used up the
// deadline; the fallback is local. A failing fallback is the failure.
func (b *Breaker) fall(ctx context.Context, now time.Time, checks []store.Check, results []store.Result, cause error) (store.Verdict, bool, error) {
	clear(results) // what the failed store may have written
	v, err := b.Fallback.Decide(context.WithoutCancel(ctx), now, checks, results)
	if err != nil {
		return store.Verdict{}, false, err
	}
	return v, true, cause
}

// trip marks the store down for retry, unless it is already: a call sent
// before the store was marked down that fails afterwards does not put the
// retry off.
func (b *Breaker) trip(ctx context.Context, err error) {
	if b.downUntil.CompareAndSwap(0, b.clockNow().Add(b.Retry).UnixNano()) {
		b.mu.Lock()
		b.cause, b.since = err, b.clockNow()
		b.mu.Unlock()
		slog.Default().LogAttrs(ctx, slog.LevelError, "rate limit backend down",
			slog.Any("error", err), slog.Duration("retry", b.Retry), slog.Bool("fallback", b.Fallback != nil))
	}
}

// up marks the store up, logging the transition from down.
func (b *Breaker) up(ctx context.Context) {
	if b.downUntil.Load() == 0 || b.downUntil.Swap(0) == 0 {
		return
	}
	b.mu.Lock()
	downFor := b.clockNow().Sub(b.since)
	b.mu.Unlock()
	slog.Default().LogAttrs(ctx, slog.LevelInfo, "rate limit backend up",
		slog.Duration("down_for", downFor), slog.Int64("skipped", b.skipped.Swap(0)))
}
