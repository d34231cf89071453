package middleware

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// logEvery is how often a rule's lines of one kind are logged (requests
// without an identity, a shadow rule's would-be refusals): once, then not
// again for that rule until this long has passed; the next line counts
// those left out.
const logEvery = time.Minute

// keyError is a request for which a rule's key function (and its
// Fallback) found no identity. It wraps keyfunc.ErrNoKey.
type keyError struct {
	rule string
	err  error
}

func (e *keyError) Error() string { return "rule " + strconv.Quote(e.rule) + ": " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// errorLog is the default error handler. It logs with slog.Default(): a
// Redis failure at Error; a request without an identity at Warn, at most
// one line per rule every logEvery (a flood of them is one line a
// minute, not one per request); a bad cost, the client's error, at Debug;
// a decision skipped while Redis is marked down not at all (the limiter
// logs when Redis goes down and comes back). The raw path is left out: it
// can hold an identity (the route pattern is kept).
type errorLog struct {
	keys *lineLimit
}

func newErrorLog(now func() time.Time) *errorLog {
	return &errorLog{keys: newLineLimit(now)}
}

// lineLimit bounds one kind of log line to one per rule every logEvery.
type lineLimit struct {
	now   func() time.Time
	mu    sync.Mutex
	rules map[string]*ruleLines // by rule name: the middleware's rules
}

// ruleLines is what a lineLimit remembers of a rule: when it last logged
// a line, and how many it left out since.
type ruleLines struct {
	at      time.Time
	skipped int
}

func newLineLimit(now func() time.Time) *lineLimit {
	return &lineLimit{now: now, rules: make(map[string]*ruleLines)}
}

func (l *errorLog) handle(r *http.Request, err error) {
	level, msg := slog.LevelError, "rate limit decision failed"
	var rule []slog.Attr
	var ke *keyError
	switch {
	case errors.Is(err, limiter.ErrUnavailable):
		return // Redis is marked down: the limiter logs the transitions
	case errors.As(err, &ke):
		skipped, ok := l.keys.allow(ke.rule)
		if !ok {
			return
		}
		level, msg = slog.LevelWarn, "rate limit: request without an identity rejected"
		rule = []slog.Attr{slog.String("rule", ke.rule), slog.Int("suppressed", skipped)}
	case errors.Is(err, errBadCost):
		level, msg = slog.LevelDebug, "rate limit: request rejected"
	}
	attrs := append([]slog.Attr{slog.String("method", r.Method), slog.String("route", r.Pattern), slog.Any("error", err)}, rule...)
	slog.Default().LogAttrs(r.Context(), level, msg, attrs...)
}

// allow counts a line of rule. ok says whether to log it, with the number
// left out since the rule's last line.
func (l *lineLimit) allow(rule string) (skipped int, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.rules[rule]
	switch {
	case k == nil:
		k = &ruleLines{}
		l.rules[rule] = k
	case now.Sub(k.at) < logEvery:
		k.skipped++
		return 0, false
	}
	skipped = k.skipped
	k.at, k.skipped = now, 0
	return skipped, true
}
