package guard

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// logEvery is how often lines of one kind are logged (a cause of backend
// failures, a rule's requests without an identity, a shadow rule's
// would-be refusals): once, then not again until this long has passed;
// the next line counts those left out ("suppressed").
const logEvery = time.Minute

// keyError is a request for which a rule's key function (and its AltIdentity)
// found no identity. It wraps the key function's error.
type keyError struct {
	rule string
	err  error
}

func (e *keyError) Error() string { return "rule " + strconv.Quote(e.rule) + ": " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// logs is the default error log and the shadow rules' log, each kind of
// line bounded to one per logEvery. It logs with slog.Default(), naming
// the route, never an identity nor a raw path.
type logs struct {
	now   func() time.Time
	mu    sync.Mutex
	lines map[string]*lines // by kind and rule, or by cause
}

// lines is what logs remembers of one kind of line: when it last logged
// one, and how many it left out since.
type lines struct {
	at      time.Time
	skipped int
}

func newLogs(now func() time.Time) *logs {
	return &logs{now: now, lines: make(map[string]*lines)}
}

// allow counts a line of kind. ok says whether to log it, with the number
// left out since kind's last line.
func (l *logs) allow(kind string) (skipped int, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.lines[kind]
	switch {
	case k == nil:
		k = &lines{}
		l.lines[kind] = k
	case now.Sub(k.at) < logEvery:
		k.skipped++
		return 0, false
	}
	skipped = k.skipped
	k.at, k.skipped = now, 0
	return skipped, true
}

// failure logs err, a failure of a request on route: a backend failure at
// Error, one line per cause every logEvery (a timeout's names the option
// that sets it); a request without an identity at Warn, one line per
// rule; a server misconfiguration at Error, one line per rule; a bad cost,
// the client's error, at Debug; a decision skipped while the backend is
// marked down not at all (the limiter logs when it goes down and comes
// back).
func (l *logs) failure(route string, err error) {
	level, msg, kind := slog.LevelError, "rate limit decision failed", ""
	var ke *keyError
	var extra []slog.Attr
	switch {
	case errors.Is(err, limiter.ErrUnavailable):
		return
	case errors.Is(err, errBadCost):
		level, msg = slog.LevelDebug, "rate limit: request rejected"
	case errors.As(err, &ke) && errors.Is(err, ratelimit.ErrConfig):
		msg, kind = "rate limit: the server cannot key requests for a rule (a misconfiguration)", "config "+ke.rule
		extra = append(extra, slog.String("rule", ke.rule))
	case errors.As(err, &ke):
		level, msg, kind = slog.LevelWarn, "rate limit: request without an identity rejected", "key "+ke.rule
		extra = append(extra, slog.String("rule", ke.rule))
	default:
		cause := limiter.CauseOf(err)
		kind = "cause " + string(cause)
		extra = append(extra, slog.String("cause", string(cause)))
		if cause == limiter.CauseTimeout {
			msg = "rate limit decision failed: the store did not answer within its timeout (set by redisstore.WithTimeout, 100 ms by default)"
		}
	}
	if kind != "" {
		skipped, ok := l.allow(kind)
		if !ok {
			return
		}
		extra = append(extra, slog.Int("suppressed", skipped))
	}
	attrs := append([]slog.Attr{slog.String("route", route), slog.Any("error", err)}, extra...)
	slog.Default().LogAttrs(context.Background(), level, msg, attrs...)
}

// logShadow logs the would-be refusals of d's shadow rules at Info: at
// most one line per rule every logEvery.
func (g *Guard[R]) logShadow(req R, d limiter.Decision) {
	for _, res := range d.Results {
		if !res.Shadow || res.Allowed {
			continue
		}
		skipped, ok := g.logs.allow("shadow " + res.Rule)
		if !ok {
			continue
		}
		slog.Default().LogAttrs(context.Background(), slog.LevelInfo, "rate limit: shadow rule would have refused a request",
			slog.String("rule", res.Rule), slog.String("route", g.route(req)),
			slog.Duration("retry_after", res.RetryAfter), slog.Bool("request_allowed", d.Allowed), slog.Int("suppressed", skipped))
	}
}
