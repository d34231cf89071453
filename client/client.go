// Package client is the other side of the wire: an http.RoundTripper for
// clients of rate-limited APIs. It reads what a server says about its
// limits (Retry-After, as seconds or an HTTP date; the RateLimit and
// RateLimit-Policy fields of draft-ietf-httpapi-ratelimit-headers-10; the
// common X-RateLimit-Remaining and X-RateLimit-Reset), paces requests so
// that a client with quota left does not burst into a 429, and retries a
// refused request once the server's wait has passed, when that is safe.
//
//	c := &http.Client{Transport: &client.Transport{}}
//
// What it learns is kept per host and shared by every request through the
// same Transport.
package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/sf"
)

// Defaults, applied when a field of Transport is zero.
const (
	defaultMaxAttempts = 3
	defaultMaxWait     = 30 * time.Second
)

// Transport is an http.RoundTripper that obeys rate limits. The zero value
// is ready to use; it is safe for concurrent use.
//
// Pacing: while a host reports quota left (RateLimit "r", or
// X-RateLimit-Remaining), requests go at once, each taking one unit of it;
// once none is left they wait until the host said more is available
// (RateLimit "t", X-RateLimit-Reset, Retry-After), then go one by one,
// spaced by the host's sustained rate (RateLimit-Policy "w"/"q", the most
// restrictive policy).
//
// Retries: a 429, or a 503 with a wait, is sent again once the wait has
// passed, up to MaxAttempts sends, when the request can be replayed (no
// body, or a GetBody) and is safe to send again (a 429 means the server
// refused it; a 503 is retried for idempotent methods only). Waits honour
// the request's context and never run past its deadline or MaxWait: a
// request that would have to wait longer gets the last response (or, when
// pacing holds it before its first send, an error wrapping
// context.DeadlineExceeded).
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// MaxAttempts bounds the sends of one request, the first included
	// (default 3).
	MaxAttempts int
	// MaxWait bounds how long one request may wait for pacing and retries
	// altogether (default 30 s).
	MaxWait time.Duration

	mu    sync.Mutex
	hosts map[string]*host
}

// host is what a Transport knows of one host's limits.
type host struct {
	next time.Time     // no request before this
	gap  time.Duration // spacing once no quota is left (from RateLimit-Policy)
	left int           // quota left, as reported less what was sent since; -1 unknown
	sent int64         // requests reserved so far
}

// RoundTrip sends req, waiting and retrying as the host's limits require.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	deadline := time.Now().Add(orDefault(t.MaxWait, defaultMaxWait))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	attempts := orDefault(t.MaxAttempts, defaultMaxAttempts)
	for attempt := 1; ; attempt++ {
		at, seq := t.reserve(req.URL.Host)
		if err := sleepUntil(ctx, at, deadline); err != nil {
			return nil, err
		}
		send := req
		if attempt > 1 {
			var err error
			if send, err = rewind(req); err != nil {
				return nil, err
			}
		}
		res, err := t.base().RoundTrip(send)
		if err != nil {
			return nil, err
		}
		wait, refused := t.observe(req.URL.Host, seq, res)
		if !refused || attempt >= attempts || !retryable(req, res.StatusCode) || time.Now().Add(wait).After(deadline) {
			return res, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
	}
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// orDefault is v, or def when v is zero or negative.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// reserve returns when the next request to addr may go, and takes its
// place: a unit of the quota left, or a slot gap after the previous one.
// seq numbers the request among those reserved for addr.
func (t *Transport) reserve(addr string) (at time.Time, seq int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.host(addr)
	at = later(time.Now(), h.next)
	switch {
	case h.left > 0:
		h.left--
	case h.left == 0:
		h.next = at.Add(h.gap)
	}
	h.sent++
	return at, h.sent
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
// reserved since take their share of it. refused is true for a 429, or a
// 503 that says how long to wait; wait is how long.
func (t *Transport) observe(addr string, seq int64, res *http.Response) (wait time.Duration, refused bool) {
	now := time.Now()
	l := read(res.Header, now)
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.host(addr)
	if l.gap > 0 {
		h.gap = l.gap
	}
	if l.left >= 0 {
		h.left = max(0, l.left-int(h.sent-seq))
	}
	wait = l.wait
	if retryAfter, ok := parseRetryAfter(res.Header.Get("Retry-After"), now); ok {
		wait = max(wait, retryAfter)
	}
	refused = res.StatusCode == http.StatusTooManyRequests ||
		(res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "")
	if refused {
		h.left = 0
	}
	if h.left == 0 || refused {
		h.next = later(h.next, now.Add(wait))
	}
	return wait, refused
}

// limits is what one response says.
type limits struct {
	left int           // least quota left over the policies; -1 unknown
	wait time.Duration // until more quota, for a policy with none left
	gap  time.Duration // the most restrictive policy's window per unit
}

// read reads the RateLimit fields, or else the X-RateLimit ones.
func read(h http.Header, now time.Time) limits {
	l := limits{left: -1}
	for _, field := range h.Values("RateLimit-Policy") {
		for _, m := range sf.Members(field) {
			q, okQ := intParam(m, "q")
			w, okW := intParam(m, "w")
			if okQ && okW && q > 0 {
				l.gap = max(l.gap, time.Duration(w)*time.Second/time.Duration(q))
			}
		}
	}
	for _, field := range h.Values("RateLimit") {
		for _, m := range sf.Members(field) {
			r, ok := intParam(m, "r")
			if !ok {
				continue
			}
			if l.left < 0 || int(r) < l.left {
				l.left = int(r)
			}
			if s, ok := intParam(m, "t"); ok && r == 0 {
				l.wait = max(l.wait, time.Duration(s)*time.Second)
			}
		}
	}
	if l.left >= 0 {
		return l
	}
	if r, err := strconv.Atoi(h.Get("X-RateLimit-Remaining")); err == nil && r >= 0 {
		l.left = r
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && r == 0 {
			l.wait = resetWait(reset, now)
		}
	}
	return l
}

// resetWait reads X-RateLimit-Reset, which servers send as Unix epoch
// seconds (GitHub, httprate, this module) or as seconds from now: a value
// past 2001 is taken for an epoch.
func resetWait(v int64, now time.Time) time.Duration {
	if v > 1_000_000_000 {
		return max(0, time.Unix(v, 0).Sub(now))
	}
	return time.Duration(max(0, v)) * time.Second
}

func intParam(member, key string) (int64, bool) {
	v, ok := sf.Param(member, key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}

// parseRetryAfter reads Retry-After: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(max(0, s)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(now)), true
	}
	return 0, false
}

// retryable reports whether req may be sent again after status: its body
// can be replayed, and the server refused it (429) or the method is
// idempotent.
func retryable(req *http.Request, status int) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if status == http.StatusTooManyRequests {
		return true
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// rewind is a copy of req to send again, with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("client: replaying the body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleepUntil waits until at, unless ctx ends first, or at is past the
// deadline (then it does not wait at all).
func sleepUntil(ctx context.Context, at, deadline time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	if at.After(deadline) {
		return fmt.Errorf("client: rate limited for %v, past the deadline or MaxWait: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
