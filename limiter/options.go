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
)

// Option configures a Limiter.
type Option func(*config) error

type config struct {
	prefix  string
	timeout time.Duration
	clock   func() time.Time
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
// clock, which is the default.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrConfig)
		}
		c.clock = now
		return nil
	}
}
