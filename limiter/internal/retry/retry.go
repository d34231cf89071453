// Package retry sends failed attempts again in the background, with
// jittered exponential backoff, until each succeeds, fails in a way that
// forbids another try, or expires. A Limiter uses it for slot releases: a
// release lost to a failure would hold its slot for the rule's whole TTL.
//
// A Queue runs one goroutine while attempts are pending, and none
// otherwise; it holds at most MaxPending attempts (beyond, an attempt is
// dropped, counted and logged); its failures are logged at most once per
// LogInterval, with counts.
package retry

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

const (
	// FirstWait is the wait before an attempt's first retry; each failure
	// doubles it, up to MaxWait. Each wait is jittered (between half and
	// all of it), so that the attempts a failure left pending on many
	// instances do not come back together.
	FirstWait = 50 * time.Millisecond
	MaxWait   = 5 * time.Second
	// LastTry bounds Close's last try at what is pending.
	LastTry = time.Second
	// MaxPending bounds what waits to be sent again.
	MaxPending = 100_000
	// LogInterval is the least time between two log lines.
	LogInterval = 10 * time.Second
)

// Attempt is one operation to send again.
type Attempt struct {
	// Send makes one try within its timeout; Again reports whether a
	// failure of it may be sent again (it surely never ran, or running it
	// twice changes nothing).
	Send    func(context.Context) error
	Again   func(error) bool
	Timeout time.Duration
	// Until is when the attempt is moot (its effect has lapsed anyway).
	Until time.Time

	next time.Time     // the next try
	wait time.Duration // the wait after the next failure, before jitter
}

// Queue is a background retrier. Its zero value is ready; Log names what
// it retries in its log line ("rate limit slot releases failed"), and
// Describe, when set, rewrites the error it logs.
type Queue struct {
	Log      string
	Describe func(error) error

	mu      sync.Mutex
	pending []*Attempt
	running bool          // the goroutine runs
	closed  bool          // Close was called: nothing more is queued
	wake    chan struct{} // tells the goroutine that the queue or closed changed
	done    chan struct{} // closed when the goroutine ends (nil: never started)

	// What the log lines count since the last one (under mu).
	failures, expired, dropped int
	lastErr                    error
	logged                     time.Time
}

// Add queues attempts that failed with cause, to be sent again.
func (q *Queue) Add(cause error, attempts ...*Attempt) {
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	for _, a := range attempts {
		if len(q.pending) >= MaxPending {
			q.dropped++
			continue
		}
		a.next, a.wait = now.Add(jitter(FirstWait)), 2*FirstWait
		q.pending = append(q.pending, a)
	}
	q.noteLocked(now, 0, cause)
	if q.wake == nil {
		q.wake = make(chan struct{}, 1)
	}
	if !q.running {
		q.running, q.done = true, make(chan struct{})
		go q.run(q.done)
	} else {
		q.signal()
	}
}

// signal wakes the goroutine up, if it sleeps.
func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run sends the pending attempts as they come due, until none is pending
// or Close, which it answers with one last try at each.
func (q *Queue) run(done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		if q.closed || len(q.pending) == 0 {
			last := q.pending
			q.pending, q.running = nil, false
			q.mu.Unlock()
			if len(last) > 0 {
				q.last(last)
			}
			return
		}
		due, first := q.dueLocked(time.Now())
		q.mu.Unlock()
		if len(due) == 0 {
			if first.IsZero() {
				continue // only expired ones: end, or see what came meanwhile
			}
			timer.Reset(time.Until(first))
			select {
			case <-timer.C:
			case <-q.wake:
				timer.Stop()
			}
			continue
		}
		q.sendDue(due)
	}
}

// sendDue tries each of due in turn until Close, which gets what is left
// for its last try at once, instead of after a try of each.
func (q *Queue) sendDue(due []*Attempt) {
	for i, a := range due {
		q.mu.Lock()
		if q.closed {
			q.pending = append(q.pending, due[i:]...)
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		q.try(context.Background(), a)
	}
}

// dueLocked takes the attempts due at now out of the queue, drops the
// expired ones, and returns the earliest next try of those kept (zero for
// none).
func (q *Queue) dueLocked(now time.Time) (due []*Attempt, first time.Time) {
	kept := q.pending[:0]
	for _, a := range q.pending {
		switch {
		case !now.Before(a.Until):
			q.expired++ // lapsed: nothing to send
		case !now.Before(a.next):
			due = append(due, a)
		default:
			if first.IsZero() || a.next.Before(first) {
				first = a.next
			}
			kept = append(kept, a)
		}
	}
	clear(q.pending[len(kept):])
	q.pending = kept
	return due, first
}

// try sends a once, within its timeout; on a failure that allows another
// try it is queued again, after its backoff.
func (q *Queue) try(ctx context.Context, a *Attempt) {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	err := a.Send(ctx)
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	if err == nil {
		return
	}
	if !a.Again(err) {
		q.noteLocked(now, 1, err)
		return // it may have run: never sent again
	}
	a.next, a.wait = now.Add(jitter(a.wait)), min(2*a.wait, MaxWait)
	q.pending = append(q.pending, a) // after Close, last gives it up
	q.noteLocked(now, 1, err)
}

// last makes one last try at each of pending, all within LastTry.
func (q *Queue) last(pending []*Attempt) {
	ctx, cancel := context.WithTimeout(context.Background(), LastTry)
	defer cancel()
	var wg sync.WaitGroup
	for _, a := range pending {
		if time.Now().Before(a.Until) {
			wg.Go(func() { q.try(ctx, a) })
		}
	}
	wg.Wait()
	q.mu.Lock()
	if n := len(q.pending); n > 0 { // failed again: given up
		q.dropped += n
		q.pending = nil
	}
	q.logged = time.Time{} // Close reports what it gave up at once
	q.noteLocked(time.Now(), 0, nil)
	q.mu.Unlock()
}

// noteLocked counts failures (and a failure's error, when not nil) and
// logs what was counted, at most once per LogInterval: the first failure
// after a quiet interval at once, the others in the next line.
func (q *Queue) noteLocked(now time.Time, failures int, err error) {
	q.failures += failures
	if err != nil {
		q.lastErr = err
	}
	if q.failures+q.expired+q.dropped == 0 || now.Sub(q.logged) < LogInterval {
		return
	}
	attrs := []slog.Attr{slog.Int("failures", q.failures), slog.Int("pending", len(q.pending)),
		slog.Int("expired", q.expired), slog.Int("dropped", q.dropped)}
	if err := q.lastErr; err != nil {
		if q.Describe != nil {
			err = q.Describe(err)
		}
		attrs = append(attrs, slog.Any("error", err))
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelWarn, q.Log, attrs...)
	q.failures, q.expired, q.dropped, q.lastErr, q.logged = 0, 0, 0, nil, now
}

// Close stops the goroutine after one last try at what is pending, and
// waits for it. Safe to call more than once.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	done := q.done
	if q.running {
		q.signal()
	}
	q.mu.Unlock()
	if done != nil {
		<-done
	}
}

// jitter is between half of d and d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}
