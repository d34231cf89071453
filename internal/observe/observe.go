// Package observe reads middleware events the way the metrics modules
// (prommetrics, otelmetrics) record them, so that both count the same
// outcomes, causes and states.
package observe

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Sink receives what an event means.
type Sink interface {
	// Decision counts one rule's outcome.
	Decision(rule, outcome string)
	// Duration records how long a request's decision took, with the
	// request's outcome.
	Duration(d time.Duration, outcome string)
	// BackendError counts a Redis failure by cause.
	BackendError(cause string)
	// State sets the backend's state: up, down or fallback.
	State(state string)
}

// States are the backend states, in a fixed order.
var States = []string{"up", "down", "fallback"}

// Visit tells s what e means. It returns the request's outcome.
func Visit(e middleware.Event, s Sink) string {
	d := e.Decision
	switch {
	case errors.Is(e.Err, keyfunc.ErrNoKey) || errors.Is(e.Err, middleware.ErrBadCost):
		for _, rule := range e.Rules {
			s.Decision(rule, "no_identity")
		}
		return "no_identity"
	case errors.Is(e.Err, context.Canceled) && !d.Fallback:
		// The client went away before its decision: Redis is not at fault.
		for _, rule := range e.Rules {
			s.Decision(rule, "canceled")
		}
		s.Duration(e.Duration, "canceled")
		return "canceled"
	case e.Err != nil && !d.Fallback:
		for _, rule := range e.Rules {
			s.Decision(rule, "error")
		}
		s.Duration(e.Duration, "error")
		backendError(e.Err, s)
		return "error"
	case e.Err != nil:
		backendError(e.Err, s)
	}
	for _, r := range d.Results {
		s.Decision(r.Rule, Outcome(d, e.Shadow, r.Allowed))
	}
	out := Outcome(d, e.Shadow, d.Allowed)
	s.Duration(e.Duration, out)
	switch {
	case d.Fallback:
		s.State("fallback")
	case !d.Cached:
		s.State("up")
	}
	return out
}

// Outcome names a verdict given how the decision was made.
func Outcome(d limiter.Decision, shadow, allowed bool) string {
	switch {
	case d.Fallback && allowed:
		return "fallback_allowed"
	case d.Fallback:
		return "fallback_denied"
	case allowed:
		return "allowed"
	case d.Cached:
		return "cached_denied"
	case shadow:
		return "shadow_allowed"
	}
	return "denied"
}

// backendError counts err by cause; any failure but a Redis reply means
// Redis is away.
func backendError(err error, s Sink) {
	cause := Cause(err)
	s.BackendError(cause)
	if cause != "reply" {
		s.State("down")
	}
}

// Cause classifies a Redis failure: unavailable (skipped while marked
// down), timeout, reply (Redis answered an error), network, other.
func Cause(err error) string {
	var reply redis.Error
	var netErr net.Error
	switch {
	case errors.Is(err, limiter.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &reply):
		return "reply"
	case errors.As(err, &netErr):
		return "network"
	}
	return "other"
}
