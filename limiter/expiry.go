package limiter

import (
	"sync"
	"time"
)

// expiries hands out channels closed once a time has passed, shared by
// every waiter whose deadline falls in the same millisecond: one timer per
// millisecond of deadlines instead of one per call. A channel is closed at
// the end of its millisecond, never before the time asked for.
type expiries struct {
	mu sync.Mutex
	at map[int64]chan struct{} // by the millisecond (since the Unix epoch) it closes at
}

// after returns a channel closed once t has passed.
func (e *expiries) after(t time.Time) <-chan struct{} {
	ms := (t.UnixNano() + int64(time.Millisecond) - 1) / int64(time.Millisecond)
	e.mu.Lock()
	defer e.mu.Unlock()
	ch, ok := e.at[ms]
	if !ok {
		if e.at == nil {
			e.at = map[int64]chan struct{}{}
		}
		ch = make(chan struct{})
		e.at[ms] = ch
		time.AfterFunc(time.Until(time.UnixMilli(ms)), func() {
			e.mu.Lock()
			delete(e.at, ms)
			e.mu.Unlock()
			close(ch)
		})
	}
	return ch
}
