package redisstore

import (
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

// Option configures the store New returns. An invalid one makes New fail with
// an error wrapping ratelimit.ErrConfig that names it.
type Option func(*config) error

type config struct {
	timeout   time.Duration
	minTTL    time.Duration
	cluster   bool
	functions script.Mode
	coalesce  bool
}

// defaultTimeout bounds each call unless WithTimeout says otherwise.
const defaultTimeout = 100 * time.Millisecond

func defaults() config { return config{timeout: defaultTimeout, coalesce: true} }

// WithTimeout bounds each Redis call (default 100 ms): a dead or slow Redis
// costs a request at most this long (twice for a stack whose keys span
// Cluster slots: the first slot's call reads the clock, then the others
// run at once). A call that runs out of time fails
// with limiter.ErrBackend wrapping context.DeadlineExceeded.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithTimeout: timeout must be positive, got %v", d)
		}
		c.timeout = d
		return nil
	}
}

// WithMinTTL makes every written key live at least d (by default a key
// lives exactly as long as its state matters, at least 1 ms). Key TTLs run
// on the Redis server's clock: set it when a passed-in clock
// (limiter.WithClock) runs slower than real time, as in tests at fixed
// instants.
func WithMinTTL(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("WithMinTTL: negative minimum TTL %v", d)
		}
		c.minTTL = d
		return nil
	}
}

// WithFunctions makes the store call the scripts as Redis functions only
// (on), failing where the server has none, or run them with EVALSHA only
// (off). By default it uses functions where the server has them and
// scripts elsewhere, decided on the first call.
func WithFunctions(on bool) Option {
	return func(c *config) error {
		c.functions = script.OnlyScripts
		if on {
			c.functions = script.OnlyFunctions
		}
		return nil
	}
}

// WithCoalescing(false) sends every decision on its own. By default a
// store on a *redis.Client or an AutoPipeliner sends the decisions that
// arrive while two are in flight together, as one call of the library's
// batch function (one pipeline where the server runs scripts instead), and
// a store on a *redis.ClusterClient or a *redis.Ring does so per master or
// shard, with one in flight to each.
func WithCoalescing(on bool) Option {
	return func(c *config) error {
		c.coalesce = on
		return nil
	}
}

// WithCluster makes the store group checks by hash slot, as on Redis
// Cluster. It is automatic for *redis.ClusterClient; set it for clients
// that hide one, such as a cluster's AutoPipeliner.
func WithCluster() Option {
	return func(c *config) error {
		c.cluster = true
		return nil
	}
}
