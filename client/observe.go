package client

import (
	"net/http"
	"time"
)

// observe learns the host's limits from res, the response to the request
// of turn, and reports whether res refused it: a 429, or a 503 that says
// how long to wait; wait is then how long its retry waits at least. A
// refusal's Retry-After is when a retry can succeed: it is the wait,
// whatever RateLimit "t" or X-RateLimit-Reset say (the time until a
// policy's quota is back, which a retry need not wait for).
func (t *Transport) observe(turn Turn, res *http.Response) (refused bool, wait time.Duration) {
	now := t.clock.Now()
	l := read(res.Header, now)
	retryAfter, says := parseRetryAfter(res.Header.Get("Retry-After"), now)
	refused = res.StatusCode == http.StatusTooManyRequests ||
		(res.StatusCode == http.StatusServiceUnavailable && says)
	if says && refused {
		l.wait = retryAfter
	}
	turn.learn(now, l, refused)
	if !refused {
		return false, 0
	}
	return true, l.wait
}
