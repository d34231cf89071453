package middleware

import (
	"log/slog"
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// logShadow logs the would-be refusals of d's shadow rules (Rule.Shadow)
// with slog.Default() at Info: at most one line per rule every logEvery,
// each counting the refusals left out since the rule's last line
// ("suppressed"). A line names the rule, the method, the route pattern and
// the rule's wait; never the identity, nor the raw path, which can hold
// one.
func (m *mw) logShadow(r *http.Request, d limiter.Decision) {
	for _, res := range d.Results {
		if !res.Shadow || res.Allowed {
			continue
		}
		skipped, ok := m.shadowLog.allow(res.Rule)
		if !ok {
			continue
		}
		slog.Default().LogAttrs(r.Context(), slog.LevelInfo, "rate limit: shadow rule would have refused a request",
			slog.String("rule", res.Rule), slog.String("method", r.Method), slog.String("route", r.Pattern),
			slog.Duration("retry_after", res.RetryAfter), slog.Bool("request_allowed", d.Allowed), slog.Int("suppressed", skipped))
	}
}
