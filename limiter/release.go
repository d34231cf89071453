package limiter

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Slot releases that failed are sent again in the background (see
// Settle): a release lost to a failure would hold its slot for the rule's
// whole TTL. A release with a slot id (see slotid.go) removes its own
// slots only, so it is sent again whenever it may not have run (a
// timeout, a lost connection, a failed dial); one without (decided by a
// store that returns no id) only when it surely never ran (see
// retryable): it gives back any slot of its instant, so it runs once.

const (
	// releaseFirstRetry is the wait before a release's first retry; each
	// failure doubles it, up to releaseMaxRetry. Each wait is jittered
	// (between half and all of it), so that the releases a failure left
	// pending on many instances do not come back together.
	releaseFirstRetry = 50 * time.Millisecond
	releaseMaxRetry   = 5 * time.Second
	// releaseAttempt bounds one attempt on a store that is not Remote (a
	// Remote store bounds its calls by its own timeout), and Close's last
	// attempt at what is pending.
	releaseAttempt = time.Second
	// maxPendingReleases bounds what waits to be retried: beyond it a
	// failed release is dropped (counted and logged), and its slot comes
	// back at its TTL.
	maxPendingReleases = 100_000
	// releaseLogInterval is the least time between two log lines about
	// failed retries: a flood of failures logs one line per interval,
	// with counts.
	releaseLogInterval = 10 * time.Second
)

// release is a slot release waiting to be sent again.
type release struct {
	store  store.Store
	at     time.Time // the decision's instant
	refund store.Refund
	until  time.Time     // when the slot has expired anyway (local clock)
	next   time.Time     // the next attempt
	wait   time.Duration // the wait after the next failure, before jitter
}

// releases is a Limiter's retrier of slot releases: a goroutine that runs
// while releases are pending, and not otherwise.
type releases struct {
	l       *Limiter
	mu      sync.Mutex
	pending []*release
	running bool          // the goroutine runs
	closed  bool          // Close was called: nothing more is queued
	wake    chan struct{} // tells the goroutine that the queue or closed changed
	done    chan struct{} // closed when the goroutine ends (nil: never started)

	// What the log lines count since the last one (under mu).
	failures, expired, dropped int
	lastErr                    error
	logged                     time.Time
}

// retry queues refunds of the decision at the instant at, on s, to be
// sent again until each succeeds or its slot's TTL has passed.
func (r *releases) retry(s store.Store, at time.Time, refunds []store.Refund, ttls []time.Duration, cause error) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	for i, rf := range refunds {
		if len(r.pending) >= maxPendingReleases {
			r.dropped++
			continue
		}
		r.pending = append(r.pending, &release{store: s, at: at, refund: rf, until: now.Add(ttls[i]),
			next: now.Add(jitter(releaseFirstRetry)), wait: 2 * releaseFirstRetry})
	}
	r.noteLocked(now, 0, cause)
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
	if !r.running {
		r.running, r.done = true, make(chan struct{})
		go r.run(r.done)
	} else {
		r.signal()
	}
}

// signal wakes the goroutine up, if it sleeps.
func (r *releases) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run sends the pending releases as they come due, until none is pending
// or Close, which it answers with one last attempt at each.
func (r *releases) run(done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		r.mu.Lock()
		if r.closed || len(r.pending) == 0 {
			last := r.pending
			r.pending, r.running = nil, false
			r.mu.Unlock()
			if len(last) > 0 {
				r.last(last)
			}
			return
		}
		now := time.Now()
		var due []*release
		var first time.Time // the earliest next attempt of those kept
		kept := r.pending[:0]
		for _, p := range r.pending {
			switch {
			case !now.Before(p.until):
				r.expired++ // the slot has expired: nothing to release
			case !now.Before(p.next):
				due = append(due, p)
			default:
				if len(kept) == 0 || p.next.Before(first) {
					first = p.next
				}
				kept = append(kept, p)
			}
		}
		clear(r.pending[len(kept):])
		r.pending = kept
		r.mu.Unlock()
		if len(due) == 0 {
			if len(kept) == 0 {
				continue // only expired ones: end, or see what came meanwhile
			}
			timer.Reset(time.Until(first))
			select {
			case <-timer.C:
			case <-r.wake:
				timer.Stop()
			}
			continue
		}
		for _, p := range due {
			r.attempt(context.Background(), p)
		}
	}
}

// attempt sends p once, within its store's timeout; on a failure that
// leaves it retryable it is queued again, after its backoff.
func (r *releases) attempt(ctx context.Context, p *release) {
	ctx, cancel := context.WithTimeout(ctx, r.l.attemptTimeout(p.store))
	defer cancel()
	err := r.l.sendRefunds(ctx, p.store, p.at, []store.Refund{p.refund})
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		return
	}
	if !retryable(err, 0, p.refund) {
		r.noteLocked(now, 1, err)
		return // it may have run: never sent again
	}
	p.next, p.wait = now.Add(jitter(p.wait)), min(2*p.wait, releaseMaxRetry)
	r.pending = append(r.pending, p) // after Close, last gives it up
	r.noteLocked(now, 1, err)
}

// last makes one last attempt at each of pending, all within
// releaseAttempt (each within its store's timeout too).
func (r *releases) last(pending []*release) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseAttempt)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range pending {
		if time.Now().Before(p.until) {
			wg.Go(func() { r.attempt(ctx, p) })
		}
	}
	wg.Wait()
	r.mu.Lock()
	if n := len(r.pending); n > 0 { // failed again: given up
		r.dropped += n
		r.pending = nil
	}
	r.logged = time.Time{} // Close reports what it gave up at once
	r.noteLocked(time.Now(), 0, nil)
	r.mu.Unlock()
}

// noteLocked counts failures (and a failure's error, when not nil) and
// logs what was counted, at most once per releaseLogInterval: the first
// failure after a quiet interval at once, the others in the next line.
func (r *releases) noteLocked(now time.Time, failures int, err error) {
	r.failures += failures
	if err != nil {
		r.lastErr = err
	}
	if r.failures+r.expired+r.dropped == 0 || now.Sub(r.logged) < releaseLogInterval {
		return
	}
	attrs := []slog.Attr{slog.Int("failures", r.failures), slog.Int("pending", len(r.pending)),
		slog.Int("expired", r.expired), slog.Int("dropped", r.dropped)}
	if r.lastErr != nil {
		attrs = append(attrs, slog.Any("error", backendError(r.lastErr)))
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelWarn, "rate limit slot releases failed", attrs...)
	r.failures, r.expired, r.dropped, r.lastErr, r.logged = 0, 0, 0, nil, now
}

// close stops the goroutine after one last attempt at what is pending,
// and waits for it. Safe to call more than once.
func (r *releases) close() {
	r.mu.Lock()
	r.closed = true
	done := r.done
	if r.running {
		r.signal()
	}
	r.mu.Unlock()
	if done != nil {
		<-done
	}
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
		return max(r.Remote(), releaseAttempt)
	}
	return releaseAttempt
}

// jitter is between half of d and d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}
