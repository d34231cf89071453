package grpclimit

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Option configures a Server.
type Option func(*config) error

type config struct {
	mw     []middleware.Option
	exempt []string
}

// DefaultExemptMethods returns the methods a Server leaves unlimited
// unless WithExemptMethods says otherwise: health checks and server
// reflection. The slice is a copy; changing it changes no Server.
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
// service. Either way the error goes to the error handler (see
// middleware.WithFailClosed).
func WithFailClosed() Option { return middlewareOption(middleware.WithFailClosed()) }

// WithShadowMode decides and sends the ratelimit metadata but never
// refuses: a call over the limit goes through (the hook sees
// Event.Shadow).
func WithShadowMode() Option { return middlewareOption(middleware.WithShadowMode()) }

// WithHook calls fn after every decision and every failure: the
// middleware's hook, so prommetrics' Collector.Hook and otelhook's
// Recorder.Hook count gRPC calls as they count requests. The event's
// Request is the call's request view (see the package doc): its Pattern,
// the route label of prommetrics, is the full method, and its context is
// the call's, which otelhook's span is a child of. fn runs on the call's
// goroutine and must be fast.
func WithHook(fn func(middleware.Event)) Option { return middlewareOption(middleware.WithHook(fn)) }

// WithErrorHandler receives every Redis failure (wrapping
// limiter.ErrBackend) and every call without an identity (wrapping
// keyfunc.ErrNoKey, naming the rule), with the call's context and full
// method. The default logs them as the middleware's default does (see
// middleware.WithErrorHandler), the full method as the route.
func WithErrorHandler(fn func(ctx context.Context, method string, err error)) Option {
	if fn == nil {
		return func(*config) error { return fmt.Errorf("%w: nil error handler", ratelimit.ErrConfig) }
	}
	return middlewareOption(middleware.WithErrorHandler(func(r *http.Request, err error) { fn(r.Context(), r.Pattern, err) }))
}

// WithConcurrencyRetryAfter sets the wait a refusal by a concurrency limit
// advertises in its RetryInfo (1 s by default; see
// middleware.WithConcurrencyRetryAfter): a slot comes back when any call
// ends, which the limiter cannot know in advance, so the wait it reports
// (until the oldest slot's TTL runs out) is only the latest a slot frees
// up.
func WithConcurrencyRetryAfter(d time.Duration) Option {
	return middlewareOption(middleware.WithConcurrencyRetryAfter(d))
}

// WithExemptMethods replaces DefaultExemptMethods: calls to these methods
// (full method names or "/pkg.Service/*") are never limited. With none,
// every call is limited, health checks and reflection included.
func WithExemptMethods(patterns ...string) Option {
	return func(c *config) error {
		if _, err := compile(patterns); err != nil {
			return fmt.Errorf("%w: exempt methods: %w", ratelimit.ErrConfig, err)
		}
		c.exempt = patterns
		return nil
	}
}

// middlewareOption is o, applied to the middleware behind a Server.
func middlewareOption(o middleware.Option) Option {
	return func(c *config) error {
		c.mw = append(c.mw, o)
		return nil
	}
}
