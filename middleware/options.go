package middleware

import (
	"fmt"
	"net/http"
	"net/textproto"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Option configures a middleware.
type Option func(*config) error

type config struct {
	guard     guard.Config[*http.Request]
	deny      func(http.ResponseWriter, *http.Request, limiter.Decision)
	headers   headers.Names
	keyStatus int
}

func defaults() config {
	return config{
		guard:     guard.Config[*http.Request]{Route: pattern},
		deny:      deny,
		headers:   canonical(headers.XRateLimit),
		keyStatus: http.StatusUnauthorized,
	}
}

// pattern is r's route for events and logs: its route pattern, which
// ServeMux and chi set, never the raw path, which can hold an identity.
func pattern(r *http.Request) string { return r.Pattern }

// WithFailClosed answers a request that Redis failed to decide (an error,
// a timeout, Redis marked down) with 503 Service Unavailable and
// Retry-After: 1. By default such a request goes through, without
// rate-limit headers: an outage of Redis does not become an outage of the
// service. Either way the error goes to the error handler.
func WithFailClosed() Option {
	return func(c *config) error {
		c.guard.FailClosed = true
		return nil
	}
}

// WithErrorHandler receives every Redis failure (wrapping
// limiter.ErrBackend), every key function failure (naming the rule) and
// every server misconfiguration (an invalid Plan, a route key outside a
// router that sets patterns), whatever the policy. The default logs them
// as package guard describes ("Logs"): Redis failures at level Error, one
// line per cause a minute, each counting the lines left out
// ("suppressed"), a timeout's naming redisstore.WithTimeout; requests
// without an identity at Warn, one line per rule a minute; requests with
// a bad cost (the client's error) at Debug; decisions skipped while Redis
// is marked down (limiter.ErrUnavailable) not at all: the limiter logs
// when Redis goes down and comes back. A decision cut short because the
// request's client went away is not a failure and does not come here (the
// hook sees it).
func WithErrorHandler(fn func(*http.Request, error)) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("%w: nil error handler", ratelimit.ErrConfig)
		}
		c.guard.OnError = fn
		return nil
	}
}

// WithShadowMode decides and sets headers but never blocks: a request over
// the limit goes through (the hook sees Event.Shadow). For rolling out new
// limits safely.
func WithShadowMode() Option {
	return func(c *config) error {
		c.guard.ShadowMode = true
		return nil
	}
}

// WithExempt skips rate limiting for requests the predicate accepts (health
// checks, an allowlist: see ExemptIPs). Several exemptions combine with OR.
func WithExempt(exempt func(*http.Request) bool) Option {
	return func(c *config) error {
		if exempt == nil {
			return fmt.Errorf("%w: nil exemption", ratelimit.ErrConfig)
		}
		c.guard.Exempt = append(c.guard.Exempt, exempt)
		return nil
	}
}

// WithHook calls fn after every decision and every failure, for metrics:
// wire Prometheus or OpenTelemetry here. fn runs on the request's goroutine
// and must be fast.
func WithHook(fn func(guard.Event)) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("%w: nil hook", ratelimit.ErrConfig)
		}
		c.guard.Hook = fn
		return nil
	}
}

// WithDenyHandler replaces the response to a request over the limit. The
// rate-limit headers are already set; the handler writes status and body
// (Retry-After too is set already, unless the cost can never be admitted).
// The decision it receives has the waits the headers sent: a concurrency
// limit's shortened (see WithConcurrencyRetryAfter). Its rules that
// refused are those whose RuleResult.Refused is true: a shadow rule may
// report Allowed false without refusing.
func WithDenyHandler(fn func(http.ResponseWriter, *http.Request, limiter.Decision)) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("%w: nil deny handler", ratelimit.ErrConfig)
		}
		c.deny = fn
		return nil
	}
}

// WithHeaders chooses the header names (default headers.XRateLimit; see
// headers.IETF and headers.Both). The default deny handler uses the same
// Retry-After name. A name that is not a header field name, or a list
// parameter's that is not a Structured Field key, is an error wrapping
// ratelimit.ErrConfig naming it.
func WithHeaders(names headers.Names) Option {
	return func(c *config) error {
		if err := checkNames(names); err != nil {
			return err
		}
		c.headers = canonical(names)
		return nil
	}
}

// WithKeyErrorStatus sets the status of a request rejected because a rule's
// key function found no identity (default 401 Unauthorized).
func WithKeyErrorStatus(status int) Option {
	return func(c *config) error {
		if status < 400 || status > 599 {
			return fmt.Errorf("%w: key error status %d is not a 4xx or 5xx", ratelimit.ErrConfig, status)
		}
		c.keyStatus = status
		return nil
	}
}

// WithConcurrencyRetryAfter sets the wait a response advertises for a
// concurrency limit (algorithms.Concurrency): 1 s by default. A refusal
// sends it as Retry-After (rounded up to whole seconds) and, with the IETF
// fields, as the rule's RateLimit t, which an admitted request that takes
// the last slot is told too. A slot comes back when its request ends,
// which the server cannot know in advance; the wait the limiter reports,
// until enough of the oldest slots expire, is only the latest a slot
// frees up (a 30 s TTL on requests of 2 s would say 30 s), so the
// response advertises the shorter of the two. Set it near the duration of
// a typical request. X-RateLimit-Reset is not shortened: see the package
// documentation.
func WithConcurrencyRetryAfter(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: concurrency retry %v is not positive", ratelimit.ErrConfig, d)
		}
		c.guard.SlotRetry = d
		return nil
	}
}

// canonical returns n with every name in canonical form
// ("X-Ratelimit-Limit"), the form http.Header stores and sends anyway, so
// that writing a header does not convert its name on every response.
func canonical(n headers.Names) headers.Names {
	for _, s := range []*string{&n.Limit, &n.Remaining, &n.Reset, &n.RetryAfter, &n.Policy, &n.RateLimit} {
		*s = textproto.CanonicalMIMEHeaderKey(*s)
	}
	return n
}
