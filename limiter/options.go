package limiter

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Defaults, applied unless an Option says otherwise.
const (
	defaultPrefix        = "ratelimit"
	defaultRetryInterval = time.Second
	defaultDenyCacheSize = 10_000
	defaultDenyCacheAge  = time.Second
)

// Option configures a Limiter (see New). An invalid one makes New fail
// with an error wrapping ratelimit.ErrConfig that names it.
type Option func(*config) error

type config struct {
	prefix    string
	clock     func() time.Time
	fallback  store.Store
	retry     time.Duration
	denyCache int
	denyAge   time.Duration
	denySet   bool
}

func defaults() config {
	return config{prefix: defaultPrefix, retry: defaultRetryInterval, denyCache: defaultDenyCacheSize, denyAge: defaultDenyCacheAge}
}

// WithPrefix sets the prefix of every key (default "ratelimit"). Limiters
// that must not share counters need different prefixes or rule names.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if prefix == "" || strings.ContainsAny(prefix, "{}") {
			return fmt.Errorf("WithPrefix: prefix %q must be non-empty and without braces", prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithClock makes decisions use now() instead of the Redis server's TIME.
// Meant for tests; in production every app server should share Redis's
// clock, which is the default. Key TTLs still run on Redis's own clock, so
// a passed-in clock that runs slower than real time needs redisstore.WithMinTTL, or
// Redis may expire state that still matters. Times outside 1970 to 2245
// are an ErrCheck.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("WithClock: nil clock")
		}
		c.clock = now
		return nil
	}
}

// WithFallback decides with s (an in-process memstore, typically)
// while Redis fails or is marked down, instead of failing: every decision
// goes straight to the fallback, adding no Redis timeout, until Redis
// answers a probe again (see WithRetryInterval).
//
// Accuracy: while Redis is away, each app instance limits on its own, so N
// instances admit up to N times a global limit, and what the fallback
// admitted is not copied to Redis when it comes back.
func WithFallback(s store.Store) Option {
	return func(c *config) error {
		if s == nil {
			return fmt.Errorf("WithFallback: nil fallback store")
		}
		c.fallback = s
		return nil
	}
}

// WithRetryInterval sets how long Redis is left alone once failures show
// that it is down (default 1 s; see Limiter.Decide for what counts: one
// failure among successes, one slow call or one lost connection do not).
// Meanwhile decisions fail at once with ErrUnavailable, or go to the
// fallback store (WithFallback), instead of each waiting for the timeout;
// then one decision at a time probes Redis, and the first success brings
// every decision back to it. The transitions are logged with
// slog.Default(), not each decision.
func WithRetryInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithRetryInterval: retry interval must be positive, got %v", d)
		}
		c.retry = d
		return nil
	}
}

// WithDenyCache sets how many denied stacks the limiter remembers locally
// (default 10,000 on a Remote store, none on other stores; 0 turns
// the cache off) and for how long at most it trusts a denial (default 1 s when
// maxAge is 0). While a client is denied, its repeated requests are denied
// without a Redis round trip until the earliest time they could pass, or
// maxAge, whichever comes first; such decisions have Decision.Cached set.
// A denial Redis has forgotten (an operator's reset, an eviction, a
// restart) is thus repeated for at most maxAge, and a denied client costs
// one Redis call per maxAge per instance. A full cache replaces old
// entries.
//
// What a cached denial knows: the rules that refused and their waits, and
// what the refusal it repeats found of the stack's other rules (their
// results are Undecided; the IETF RateLimit field still lists them). What
// it cannot know: what happened since. Its wait is a lower bound when
// another rule of the stack ran out since, and the entry ends when its
// wait does, so the client's first request after that wait is decided by
// Redis and gets the real one.
func WithDenyCache(size int, maxAge time.Duration) Option {
	return func(c *config) error {
		if size < 0 {
			return fmt.Errorf("WithDenyCache: negative size %d", size)
		}
		if maxAge < 0 {
			return fmt.Errorf("WithDenyCache: negative maxAge %v", maxAge)
		}
		if maxAge == 0 {
			maxAge = defaultDenyCacheAge
		}
		c.denyCache, c.denyAge, c.denySet = size, maxAge, true
		return nil
	}
}
