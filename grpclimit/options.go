package grpclimit

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
)

// Option configures a Server.
type Option func(*settings) error

type settings struct {
	guard       guard.Config[*Call]
	exempt      []string                        // added to the defaults
	noDefaults  bool                            // the defaults are limited
	noMetadata  bool                            // WithoutMetadata
	methods     map[string]methods              // by rule name
	messageCost map[string]func(*Call, any) int // by rule name
	named       map[string]string               // the rules options name: the option, for errors
}

// exemptMethods are the patterns c leaves unlimited.
func (c *settings) exemptMethods() []string {
	if c.noDefaults {
		return c.exempt
	}
	return append(slices.Clone(defaultExempt), c.exempt...)
}

// DefaultExemptMethods returns the methods a Server leaves unlimited
// unless WithoutDefaultExemptions says otherwise: health checks and
// server reflection. The slice is a copy; changing it changes no Server.
func DefaultExemptMethods() []string { return slices.Clone(defaultExempt) }

// defaultExempt are DefaultExemptMethods, read by New and
// Client.StreamClientInterceptor and never written.
var defaultExempt = []string{
	"/grpc.health.v1.Health/*",
	"/grpc.reflection.v1.ServerReflection/*",
	"/grpc.reflection.v1alpha.ServerReflection/*",
}

// WithFailClosed refuses a call that the limiter failed to decide (Redis
// failed, timed out or is marked down) with codes.Unavailable and a
// RetryInfo of 1 s. By default such a call goes through without the
// ratelimit metadata: an outage of Redis does not become an outage of the
// service. Either way the error goes to the error handler.
func WithFailClosed() Option {
	return func(c *settings) error { c.guard.FailClosed = true; return nil }
}

// WithShadowMode decides and sends the ratelimit metadata but never
// refuses: a call over the limit goes through (the hook sees
// Event.Shadow).
func WithShadowMode() Option {
	return func(c *settings) error { c.guard.ShadowMode = true; return nil }
}

// WithoutMetadata sends no ratelimit and ratelimit-policy metadata: a
// call pays for no header fields, and a refusal still carries its
// RetryInfo and QuotaFailure. Clients then pace by refusals alone (see
// Client): use it where no client reads the metadata.
func WithoutMetadata() Option {
	return func(c *settings) error { c.noMetadata = true; return nil }
}

// WithHook calls fn after every decision and every failure, as
// middleware.WithHook does for requests: prommetrics' Collector.Hook and
// otelhook's Recorder.Hook count gRPC calls as they count requests. The
// event's Route, prommetrics' route label, is the full method (with an
// unknown-service handler, whatever method a client sends: prommetrics
// bounds its label, and so must any other hook that keeps routes), and its
// Context is the call's, which otelhook's span is a child of. fn runs on
// the call's goroutine and must be fast.
func WithHook(fn func(guard.Event)) Option {
	return func(c *settings) error {
		if fn == nil {
			return fmt.Errorf("%w: nil hook", ratelimit.ErrConfig)
		}
		c.guard.Hook = fn
		return nil
	}
}

// WithErrorHandler receives every Redis failure (wrapping
// limiter.ErrBackend), every call without an identity (naming the rule)
// and every misconfiguration, with the call's context and full method.
// The default logs them as package guard describes ("Logs"), the full
// method as the route.
func WithErrorHandler(fn func(ctx context.Context, method string, err error)) Option {
	return func(c *settings) error {
		if fn == nil {
			return fmt.Errorf("%w: nil error handler", ratelimit.ErrConfig)
		}
		c.guard.OnError = func(call *Call, err error) { fn(call.ctx, call.method, err) }
		return nil
	}
}

// WithConcurrencyRetryAfter sets the wait a refusal by a concurrency limit
// advertises in its RetryInfo (1 s by default): a slot comes back when
// any call ends, which the limiter cannot know in advance, so the wait it
// reports (until the oldest slot's TTL runs out) is only the latest a
// slot frees up.
func WithConcurrencyRetryAfter(d time.Duration) Option {
	return func(c *settings) error {
		if d <= 0 {
			return fmt.Errorf("%w: concurrency retry %v is not positive", ratelimit.ErrConfig, d)
		}
		c.guard.SlotRetry = d
		return nil
	}
}

// WithExemptMethods adds methods (full method names or "/pkg.Service/*")
// that are never limited to DefaultExemptMethods.
func WithExemptMethods(patterns ...string) Option {
	return func(c *settings) error {
		if _, err := compile(patterns); err != nil {
			return fmt.Errorf("%w: exempt methods: %w", ratelimit.ErrConfig, err)
		}
		c.exempt = append(c.exempt, patterns...)
		return nil
	}
}

// WithoutDefaultExemptions limits DefaultExemptMethods too (health checks
// and reflection), leaving exempt only what WithExemptMethods adds.
func WithoutDefaultExemptions() Option {
	return func(c *settings) error {
		c.noDefaults = true
		return nil
	}
}

// WithMethods limits the rule named rule to the calls of patterns: full
// method names ("/pkg.Service/Method") or a service's every method
// ("/pkg.Service/*"). Without it, a rule limits every call. Give it once
// per rule, with every pattern: a second is an error.
func WithMethods(rule string, patterns ...string) Option {
	return func(c *settings) error {
		ms, err := compile(patterns)
		if err != nil || len(patterns) == 0 {
			return fmt.Errorf("%w: rule %q: methods: %v (allowed: one or more patterns)", ratelimit.ErrConfig, rule, err)
		}
		return set(c, &c.methods, rule, "WithMethods", ms)
	}
}

// WithMessageCost also charges the rule named rule for each message a
// stream receives from its client (a client-streaming or bidirectional
// call): one decision per message, of the rules that have a message cost,
// at fn's weight for the message (0 charges nothing; negative refuses).
// A refused message ends RecvMsg with the refusal (codes.ResourceExhausted
// with its RetryInfo), which the handler returns. Not for a concurrency
// limit; once per rule.
func WithMessageCost(rule string, fn func(c *Call, msg any) int) Option {
	return func(c *settings) error {
		if fn == nil {
			return fmt.Errorf("%w: rule %q: nil message cost", ratelimit.ErrConfig, rule)
		}
		return set(c, &c.messageCost, rule, "WithMessageCost", fn)
	}
}

// set sets (*m)[rule] to v for option, and records that option names
// rule, which New checks: an error when option was given for rule
// already, since the second would replace the first without a word.
func set[V any](c *settings, m *map[string]V, rule, option string, v V) error {
	if _, ok := (*m)[rule]; ok {
		return fmt.Errorf("%w: rule %q: %s given twice (give it once)", ratelimit.ErrConfig, rule, option)
	}
	if *m == nil {
		*m = map[string]V{}
	}
	if c.named == nil {
		c.named = map[string]string{}
	}
	(*m)[rule], c.named[rule] = v, option
	return nil
}
