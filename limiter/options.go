package limiter

import (
	"fmt"
	"strings"
	"time"
)

// Defaults, applied unless an Option says otherwise.
const (
	// DefaultPrefix begins every key.
	DefaultPrefix = "ratelimit"
	// DefaultTimeout bounds each Redis call: a dead or slow Redis costs a
	// request at most this long.
	DefaultTimeout = 100 * time.Millisecond
	// DefaultFallbackRetry is how long a failed Redis is left alone before
	// one request probes it again (see WithFallback).
	DefaultFallbackRetry = time.Second
)

// Option configures a Limiter.
type Option func(*config) error

type config struct {
	prefix    string
	timeout   time.Duration
	clock     func() time.Time
	fallback  Store
	retry     time.Duration
	denyCache int
}

// WithPrefix sets the prefix of every key (default DefaultPrefix). Limiters
// that must not share counters need different prefixes or rule names.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if prefix == "" || strings.ContainsAny(prefix, "{}") {
			return fmt.Errorf("%w: prefix %q must be non-empty and without braces", ErrConfig, prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithTimeout bounds each Redis call (default DefaultTimeout). A call that
// runs out of time fails with ErrBackend wrapping context.DeadlineExceeded.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout must be positive, got %v", ErrConfig, d)
		}
		c.timeout = d
		return nil
	}
}

// WithClock makes decisions use now() instead of the Redis server's TIME.
// Meant for tests; in production every app server should share Redis's
// clock, which is the default. Key TTLs still run on Redis's own clock, so
// a passed-in clock that runs slower than real time needs MinTTL (see
// RedisStore), or Redis may expire state that still matters. Times outside
// 1970 to algorithms.MaxTime are an ErrCheck.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrConfig)
		}
		c.clock = now
		return nil
	}
}

// WithFallback decides with store (an in-process memstore, typically)
// while Redis fails or times out, instead of failing.
//
// Health check: the first failure marks Redis down for retry
// (DefaultFallbackRetry when 0). Meanwhile every decision goes straight to
// the fallback, adding no Redis timeout. Then one request at a time probes
// Redis; the first success brings all decisions back to it.
//
// Accuracy: while Redis is away, each app instance limits on its own, so N
// instances admit up to N times a global limit, and what the fallback
// admitted is not copied to Redis when it comes back.
func WithFallback(store Store, retry time.Duration) Option {
	return func(c *config) error {
		if store == nil {
			return fmt.Errorf("%w: nil fallback store", ErrConfig)
		}
		if retry < 0 {
			return fmt.Errorf("%w: negative fallback retry %v", ErrConfig, retry)
		}
		if retry == 0 {
			retry = DefaultFallbackRetry
		}
		c.fallback, c.retry = store, retry
		return nil
	}
}

// WithDenyCache sets how many denied stacks the limiter remembers locally
// (default DefaultDenyCacheSize; 0 turns the cache off). While a client is
// denied, its repeated requests are denied without a Redis round trip until
// the earliest time they could pass; such decisions have Decision.Cached
// set. The cache is per Limiter and never used with in-process stores.
func WithDenyCache(size int) Option {
	return func(c *config) error {
		if size < 0 {
			return fmt.Errorf("%w: negative deny cache size %d", ErrConfig, size)
		}
		c.denyCache = size
		return nil
	}
}
