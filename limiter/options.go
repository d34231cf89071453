package limiter

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

// Defaults, applied unless an Option says otherwise.
const (
	defaultPrefix        = "ratelimit"
	defaultTimeout       = 100 * time.Millisecond
	defaultRetryInterval = time.Second
	defaultDenyCacheSize = 10_000
	defaultDenyCacheAge  = time.Second
)

// Option configures a Limiter or a RedisStore. WithTimeout, WithCluster and
// WithMinTTL configure the Redis store: New passes them on to it,
// NewRedisStore takes only them, and NewWithStore refuses them (give them
// to NewRedisStore). The others configure the Limiter.
type Option struct {
	name  string
	store bool
	apply func(*config) error
}

type config struct {
	// Limiter options.
	prefix    string
	clock     func() time.Time
	fallback  Store
	retry     time.Duration
	denyCache int
	denyAge   time.Duration
	denySet   bool
	// Store options.
	timeout   time.Duration
	minTTL    time.Duration
	cluster   bool
	functions script.Mode
	alone     bool // no coalescing
}

func defaults() config {
	return config{prefix: defaultPrefix, timeout: defaultTimeout, retry: defaultRetryInterval,
		denyCache: defaultDenyCacheSize, denyAge: defaultDenyCacheAge}
}

// apply applies the options whose store flag is store, and fails on the
// others with a message saying where they belong.
func (c *config) apply(opts []Option, store bool) error {
	for _, opt := range opts {
		if opt.apply == nil {
			return fmt.Errorf("%w: zero Option", ratelimit.ErrConfig)
		}
		if opt.store != store {
			where := "a Limiter (New or NewWithStore)"
			if opt.store {
				where = "the Redis store (New or NewRedisStore)"
			}
			return fmt.Errorf("%w: %s configures %s", ratelimit.ErrConfig, opt.name, where)
		}
		if err := opt.apply(c); err != nil {
			return fmt.Errorf("%w: %s: %w", ratelimit.ErrConfig, opt.name, err)
		}
	}
	return nil
}

// split separates store options from limiter options.
func split(opts []Option) (store, limiter []Option) {
	for _, opt := range opts {
		if opt.store {
			store = append(store, opt)
		} else {
			limiter = append(limiter, opt)
		}
	}
	return store, limiter
}

// WithPrefix sets the prefix of every key (default "ratelimit"). Limiters
// that must not share counters need different prefixes or rule names.
func WithPrefix(prefix string) Option {
	return Option{name: "WithPrefix", apply: func(c *config) error {
		if prefix == "" || strings.ContainsAny(prefix, "{}") {
			return fmt.Errorf("prefix %q must be non-empty and without braces", prefix)
		}
		c.prefix = prefix
		return nil
	}}
}

// WithClock makes decisions use now() instead of the Redis server's TIME.
// Meant for tests; in production every app server should share Redis's
// clock, which is the default. Key TTLs still run on Redis's own clock, so
// a passed-in clock that runs slower than real time needs WithMinTTL, or
// Redis may expire state that still matters. Times outside 1970 to 2245
// are an ErrCheck.
func WithClock(now func() time.Time) Option {
	return Option{name: "WithClock", apply: func(c *config) error {
		if now == nil {
			return fmt.Errorf("nil clock")
		}
		c.clock = now
		return nil
	}}
}

// WithFallback decides with store (an in-process memstore, typically)
// while Redis fails or is marked down, instead of failing: every decision
// goes straight to the fallback, adding no Redis timeout, until Redis
// answers a probe again (see WithRetryInterval).
//
// Accuracy: while Redis is away, each app instance limits on its own, so N
// instances admit up to N times a global limit, and what the fallback
// admitted is not copied to Redis when it comes back.
func WithFallback(store Store) Option {
	return Option{name: "WithFallback", apply: func(c *config) error {
		if store == nil {
			return fmt.Errorf("nil fallback store")
		}
		c.fallback = store
		return nil
	}}
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
	return Option{name: "WithRetryInterval", apply: func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("retry interval must be positive, got %v", d)
		}
		c.retry = d
		return nil
	}}
}

// WithDenyCache sets how many denied stacks the limiter remembers locally
// (default 10,000 on a RedisStore, none on other stores; 0 turns the cache
// off) and for how long at most it trusts a denial (default 1 s when
// maxAge is 0). While a client is denied, its repeated requests are denied
// without a Redis round trip until the earliest time they could pass, or
// maxAge, whichever comes first; such decisions have Decision.Cached set.
// A denial Redis has forgotten (an operator's reset, an eviction, a
// restart) is thus repeated for at most maxAge, and a denied client costs
// one Redis call per maxAge per instance. A full cache replaces old
// entries.
func WithDenyCache(size int, maxAge time.Duration) Option {
	return Option{name: "WithDenyCache", apply: func(c *config) error {
		if size < 0 {
			return fmt.Errorf("negative size %d", size)
		}
		if maxAge < 0 {
			return fmt.Errorf("negative maxAge %v", maxAge)
		}
		if maxAge == 0 {
			maxAge = defaultDenyCacheAge
		}
		c.denyCache, c.denyAge, c.denySet = size, maxAge, true
		return nil
	}}
}

// WithTimeout bounds each Redis call (default 100 ms): a dead or slow Redis
// costs a request at most this long. A call that runs out of time fails
// with ErrBackend wrapping context.DeadlineExceeded. A store option.
func WithTimeout(d time.Duration) Option {
	return Option{name: "WithTimeout", store: true, apply: func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("timeout must be positive, got %v", d)
		}
		c.timeout = d
		return nil
	}}
}

// WithMinTTL makes every written key live at least d (by default a key
// lives exactly as long as its state matters, at least 1 ms). Key TTLs run
// on the Redis server's clock: set it when a passed-in clock (WithClock)
// runs slower than real time, as in tests at fixed instants. A store
// option.
func WithMinTTL(d time.Duration) Option {
	return Option{name: "WithMinTTL", store: true, apply: func(c *config) error {
		if d < 0 {
			return fmt.Errorf("negative minimum TTL %v", d)
		}
		c.minTTL = d
		return nil
	}}
}

// WithRedisFunctions makes the store call the scripts as Redis functions
// only (on), failing where the server has none, or run them with EVALSHA
// only (off). By default it uses functions where the server has them and
// scripts elsewhere, decided on the first call. A store option.
func WithRedisFunctions(on bool) Option {
	return Option{name: "WithRedisFunctions", store: true, apply: func(c *config) error {
		c.functions = script.OnlyScripts
		if on {
			c.functions = script.OnlyFunctions
		}
		return nil
	}}
}

// WithCoalescing(false) sends every decision on its own. By default a
// store on a *redis.Client or an AutoPipeliner sends the decisions that
// arrive while two are in flight together, as one call of the library's
// batch function (one pipeline where the server runs scripts instead; see
// RedisStore). A store option.
func WithCoalescing(on bool) Option {
	return Option{name: "WithCoalescing", store: true, apply: func(c *config) error {
		c.alone = !on
		return nil
	}}
}

// WithCluster makes the store group checks by hash slot, as on Redis
// Cluster. It is automatic for *redis.ClusterClient; set it for clients
// that hide one, such as a cluster's AutoPipeliner. A store option.
func WithCluster() Option {
	return Option{name: "WithCluster", store: true, apply: func(c *config) error {
		c.cluster = true
		return nil
	}}
}
