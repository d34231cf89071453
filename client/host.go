package client

import (
	"net/http"
	"time"
)

// host is what a Transport knows of one host's limits.
type host struct {
	until time.Time     // the host said no more quota before this
	turn  time.Time     // while none is known to be left, the next request's turn
	gap   time.Duration // between turns: the sustained rate (RateLimit-Policy)
	left  int           // quota left, as reported less what was sent since; -1 unknown
	sent  int64         // requests reserved so far
	seen  int64         // the latest request whose response was read
}

// reserve returns when the next request to addr may go, and takes its
// place: a unit of the quota left, or, while none is known to be left, a
// turn gap after the previous one. seq numbers the request among those
// reserved for addr. When at is past the deadline, ok is false and
// nothing is taken.
func (t *Transport) reserve(addr string, deadline time.Time) (at time.Time, seq int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.host(addr)
	at = later(t.clock.Now(), h.until)
	if h.left == 0 {
		at = later(at, h.turn)
	}
	if at.After(deadline) {
		return at, 0, false
	}
	switch {
	case h.left > 0:
		h.left--
	case h.left == 0:
		h.turn = at.Add(h.gap)
	}
	h.sent++
	return at, h.sent, true
}

func (t *Transport) host(addr string) *host {
	if t.hosts == nil {
		t.hosts = make(map[string]*host)
	}
	h := t.hosts[addr]
	if h == nil {
		h = &host{left: -1}
		t.hosts[addr] = h
	}
	return h
}

// observe learns the host's limits from the response to request seq. The
// quota it reports was left right after that request: the requests
// reserved since take their share of it. Quota left lifts any wait and
// the turns (the host has said it can take a request now); none left
// holds requests until the host said more is available, then gives them
// turns. A refusal's Retry-After is when a retry can succeed: it is the
// wait, whatever RateLimit "t" or X-RateLimit-Reset say (the time until
// a policy's quota is back, which a retry need not wait for), and the
// retry's turn unless other requests hold turns already. A response to
// an earlier request than one already read tells nothing newer. refused
// is true for a 429, or a 503 that says how long to wait.
func (t *Transport) observe(addr string, seq int64, res *http.Response) (refused bool) {
	now := t.clock.Now()
	l := read(res.Header, now)
	refused = res.StatusCode == http.StatusTooManyRequests ||
		(res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "")
	wait := l.wait
	if retryAfter, ok := parseRetryAfter(res.Header.Get("Retry-After"), now); ok && refused {
		wait = retryAfter
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.host(addr)
	if l.gap > 0 {
		h.gap = l.gap
	}
	if seq < h.seen {
		return refused
	}
	h.seen = seq
	if l.left >= 0 {
		h.left = max(0, l.left-int(h.sent-seq))
	}
	switch {
	case refused:
		h.left, h.until = 0, now.Add(wait)
		if h.sent == seq {
			// No request holds a turn after this one's: the retry goes
			// when the host said, not a turn later.
			h.turn = time.Time{}
		}
	case h.left > 0:
		h.until, h.turn = time.Time{}, time.Time{}
	case h.left == 0:
		h.until = later(h.until, now.Add(wait))
	}
	return refused
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
