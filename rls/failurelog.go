package rls

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// logEvery is how often a cause of failures is logged: once, then not
// again until this long has passed, the next line counting those left
// out.
const logEvery = time.Minute

// failureLog is a Server's default error log: one line per cause of
// failure every logEvery, so that an outage of Redis under load is a line
// a minute, not a line per request.
type failureLog struct {
	now   func() time.Time
	mu    sync.Mutex
	last  map[limiter.Cause]time.Time
	count map[limiter.Cause]int // left out since the last line
}

func newFailureLog(now func() time.Time) *failureLog {
	return &failureLog{now: now, last: map[limiter.Cause]time.Time{}, count: map[limiter.Cause]int{}}
}

// failure logs err, unless a line of its cause was logged less than
// logEvery ago, or the backend is marked down (the limiter logs that).
func (l *failureLog) failure(err error) {
	if errors.Is(err, limiter.ErrUnavailable) {
		return
	}
	cause := limiter.CauseOf(err)
	now := l.now()
	l.mu.Lock()
	at, seen := l.last[cause]
	if seen && now.Sub(at) < logEvery {
		l.count[cause]++
		l.mu.Unlock()
		return
	}
	suppressed := l.count[cause]
	l.last[cause], l.count[cause] = now, 0
	l.mu.Unlock()
	slog.Default().LogAttrs(context.Background(), slog.LevelError, "ratelimit: rls: a request was not decided",
		slog.String("cause", string(cause)), slog.Any("error", err), slog.Int("suppressed", suppressed))
}
