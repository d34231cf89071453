package limiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrUnavailable is wrapped (with ErrBackend) by the error of a decision
// that did not go to Redis because Redis is marked down: recent calls
// failed, and the retry interval has not passed (see WithRetryInterval).
// Such decisions fail at once instead of waiting for the timeout; the
// transitions are logged, not each decision.
var ErrUnavailable = errors.New("ratelimit: backend marked down")

// tripAfter is how many consecutive failures mark the store down (timeouts
// once they have gone on for the store's timeout): one slow call among
// successes (a pause, a slow command), or one lost pipeline of coalesced
// decisions, must not turn every request away for a retry interval.
const tripAfter = 3

// breaker marks the store down after tripAfter consecutive failures, for
// retry: meanwhile decisions go to the fallback store, or fail at once with
// ErrUnavailable; then one decision at a time probes the store, and the
// first success brings all decisions back. Transitions are logged with slog.Default():
// down (with the cause) at Error, back up (with how long and how many
// decisions were answered without Redis) at Info.
type breaker struct {
	store, fallback decider // fallback nil: fail fast while down
	retry           time.Duration
	downUntil       atomic.Int64  // Unix nanoseconds; 0 while up
	probing         atomic.Bool   // one decision at a time probes a down store
	skipped         atomic.Int64  // decisions answered without the store while down
	failures        atomic.Int32  // consecutive failures while up
	firstFailure    atomic.Int64  // Unix nanoseconds of the first of them
	span            time.Duration // how long failures must go on to trip (the store's timeout)

	mu    sync.Mutex // guards the transition's facts
	since time.Time
	cause error
}

// decider is the part of a Store the breaker uses.
type decider interface {
	Decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error)
}

// decide asks the store unless it is marked down. It returns the store's
// decision, or the fallback's with Fallback set (and the store's failure,
// nil when the store was skipped), or an ErrUnavailable error.
func (b *breaker) decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error) {
	if until := b.downUntil.Load(); until != 0 {
		if time.Now().UnixNano() < until || !b.probing.CompareAndSwap(false, true) {
			b.skipped.Add(1)
			return b.skip(ctx, now, checks)
		}
		defer b.probing.Store(false)
	}
	d, err := b.store.Decide(ctx, now, checks)
	switch {
	case err == nil:
		b.failures.Store(0)
		b.up(ctx)
		return d, nil
	case ctx.Err() != nil:
		return Decision{}, err // the caller gave up: says nothing of Redis
	}
	if b.fail(isTimeout(err)) || b.downUntil.Load() != 0 {
		b.down(ctx, err) // tripped, or a probe failed
	}
	if b.fallback == nil {
		return Decision{}, err
	}
	return b.fall(ctx, now, checks, err)
}

// fail counts a failure and reports whether the store is to be marked
// down: tripAfter consecutive failures and, when this one is a timeout,
// the first of them at least span ago. A pipeline of coalesced decisions
// lost together times out all of them at one instant: one slow moment,
// not an outage, until the timeouts go on for span. Other failures (a
// refused connection) trip at once.
func (b *breaker) fail(timeout bool) bool {
	now := time.Now().UnixNano()
	n := b.failures.Add(1)
	if n == 1 {
		b.firstFailure.Store(now)
	}
	return n >= tripAfter && (!timeout || now-b.firstFailure.Load() >= int64(b.span))
}

// isTimeout reports whether err is a deadline or a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// dialFailed reports whether err is, or carries as its cause, a failed
// dial: nothing to talk to.
func dialFailed(err error) bool {
	var op *net.OpError
	var de *dialError
	return errors.As(err, &de) || (errors.As(err, &op) && op.Op == "dial")
}

// skip answers a decision while the store is down.
func (b *breaker) skip(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error) {
	if b.fallback != nil {
		return b.fall(ctx, now, checks, nil)
	}
	b.mu.Lock()
	cause := b.cause
	b.mu.Unlock()
	return Decision{}, fmt.Errorf("%w (last failure: %v)", ErrUnavailable, cause)
}

// fall decides with the fallback. The store may have used up the
// deadline; the fallback is local. A failing fallback is the failure.
func (b *breaker) fall(ctx context.Context, now time.Time, checks []StoreCheck, cause error) (Decision, error) {
	d, err := b.fallback.Decide(context.WithoutCancel(ctx), now, checks)
	if err != nil {
		return Decision{}, err
	}
	d.Fallback = true
	return d, cause
}

// down marks the store down for retry, logging the transition from up.
func (b *breaker) down(ctx context.Context, err error) {
	wasUp := b.downUntil.Swap(time.Now().Add(b.retry).UnixNano()) == 0
	b.mu.Lock()
	b.cause = err
	if wasUp {
		b.since = time.Now()
	}
	b.mu.Unlock()
	if wasUp {
		slog.Default().LogAttrs(ctx, slog.LevelError, "rate limit backend down",
			slog.Any("error", err), slog.Duration("retry", b.retry), slog.Bool("fallback", b.fallback != nil))
	}
}

// up marks the store up, logging the transition from down.
func (b *breaker) up(ctx context.Context) {
	if b.downUntil.Load() == 0 || b.downUntil.Swap(0) == 0 {
		return
	}
	b.mu.Lock()
	downFor := time.Since(b.since)
	b.mu.Unlock()
	slog.Default().LogAttrs(ctx, slog.LevelInfo, "rate limit backend up",
		slog.Duration("down_for", downFor), slog.Int64("skipped", b.skipped.Swap(0)))
}
