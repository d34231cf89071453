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
// same Transport. Pacer is the same pacing without HTTP, for clients of
// other protocols.
package client

import (
	"context"
	"io"
	"net/http"
	"time"
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
// restrictive policy), until a response reports quota left again. A wait
// the host rounded up to whole seconds is not lost: the quota it regained
// meanwhile goes at once, so a client that keeps sending gets the rate
// the host advertises.
//
// Retries: a 429, or a 503 with a wait, is sent again once its
// Retry-After has passed (a longer RateLimit "t" or X-RateLimit-Reset,
// which say when a policy's quota is back, is the wait only without one),
// up to MaxAttempts sends, when the request can be replayed (no body, or
// a GetBody) and is safe to send again (a 429 means the server refused
// it; a 503 is retried for idempotent methods only).
//
// Waits honour the request's context and never run past its deadline or
// MaxWait. When the wait before a retry would, RoundTrip returns the
// response that refused the request, the 429 or 503 itself with its body
// unread, and a nil error. A request its host is known to refuse until
// past them (a wait the host gave an earlier request) is not sent:
// RoundTrip returns an error wrapping ErrWaitTooLong at once.
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// MaxAttempts bounds the sends of one request, the first included
	// (default 3).
	MaxAttempts int
	// MaxWait bounds how long one request may wait for pacing and retries
	// altogether (default 30 s).
	MaxWait time.Duration

	pacer Pacer // by host, all its policies together
	clock clock
}

// RoundTrip sends req, waiting and retrying as the host's limits require.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	addr := req.URL.Host
	start := t.clock.Now()
	maxWait := orDefault(t.MaxWait, defaultMaxWait)
	deadline, byContext := start.Add(maxWait), false
	if d, ok := ctx.Deadline(); ok {
		// The context's deadline is on the real clock.
		if d := start.Add(time.Until(d)); d.Before(deadline) {
			deadline, byContext = d, true
		}
	}
	attempts := orDefault(t.MaxAttempts, defaultMaxAttempts)
	var res *http.Response
	var retryAt time.Time // a refused request's retry goes no sooner
	for attempt := 1; ; attempt++ {
		now := t.clock.Now()
		// The host's pace may not hold the retry for its refusal's wait:
		// a response to a later request, read first, said more recently
		// that it had quota left.
		turn, ok := t.pacer.Reserve(addr, "", later(now, retryAt), deadline)
		if !ok {
			if res == nil {
				// Never sent: a RoundTripper closes the body all the same.
				closeBody(req)
			}
			switch {
			case res != nil:
				return res, nil
			case !turn.At.After(now): // nothing holds the request: its deadline has passed
				return nil, context.DeadlineExceeded
			}
			return nil, tooLong(addr, turn.At.Sub(start), maxWait, byContext)
		}
		if res != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
		}
		if err := t.clock.sleepUntil(ctx, turn.At); err != nil {
			turn.unsent()
			if attempt == 1 {
				closeBody(req)
			}
			return nil, err
		}
		send := req
		if attempt > 1 {
			var err error
			if send, err = rewind(req); err != nil {
				return nil, err
			}
		}
		answer, err := t.base().RoundTrip(send)
		if err != nil {
			return nil, err
		}
		res = answer
		refused, wait := t.observe(turn, res)
		if !refused || attempt >= attempts || !retryable(req, res.StatusCode) {
			return res, nil
		}
		retryAt = t.clock.Now().Add(wait)
	}
}

// closeBody closes the body of req, which was not sent.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
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
