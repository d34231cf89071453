package transport

import (
	"sync"
	"time"
)

// expiries hands out channels closed once a time has passed, shared by
// every waiter whose deadline falls in the same millisecond: one timer per
// millisecond of deadlines instead of one per call. A channel is closed at
// the end of its millisecond, never before the time asked for. Milliseconds
// are counted on the monotonic clock from the first use, so a step of the
// wall clock moves no deadline.
type expiries struct {
	mu    sync.Mutex
	start time.Time               // the first use: the origin of the milliseconds
	at    map[int64]chan struct{} // by the millisecond after start it closes at
}

// after returns a channel closed once t has passed.
func (e *expiries) after(t time.Time) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
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
			delete(e.at, int64(ms))
			e.mu.Unlock()
			close(ch)
		})
	}
	return ch
}
