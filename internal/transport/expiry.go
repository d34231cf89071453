package transport

import (
	"sync"
	"time"
)

// expiries hands out channels closed once a time has passed, shared by
// every waiter whose deadline falls in the same millisecond: one timer per
// millisecond of deadlines instead of one per call. A channel is closed at
// the end of its millisecond, never before the time asked for, or sooner
// by end. Milliseconds are counted on the monotonic clock from the first
// use, so a step of the wall clock moves no deadline.
type expiries struct {
	mu    sync.Mutex
	start time.Time               // the first use: the origin of the milliseconds
	at    map[int64]chan struct{} // by the millisecond after start it closes at
	ended bool                    // by end: every channel is closed
}

// after returns a channel closed once t has passed.
func (e *expiries) after(t time.Time) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return closedChan
	}
	if e.at == nil {
		e.start, e.at = time.Now(), map[int64]chan struct{}{}
	}
	ms := (t.Sub(e.start) + time.Millisecond - 1) / time.Millisecond
	ch, ok := e.at[int64(ms)]
	if !ok {
		ch = make(chan struct{})
		e.at[int64(ms)] = ch
		time.AfterFunc(time.Until(e.start.Add(ms*time.Millisecond)), func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if _, open := e.at[int64(ms)]; open {
				delete(e.at, int64(ms))
				close(ch)
			}
		})
	}
	return ch
}

// end closes every channel now, those handed out and those to come.
func (e *expiries) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for ms, ch := range e.at {
		delete(e.at, ms)
		close(ch)
	}
	e.ended = true
}

// failed reports whether end was called.
func (e *expiries) failed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ended
}
