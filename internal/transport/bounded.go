package transport

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// Bounded returns a clone of c, sharing its connection pool, whose socket
// reads and writes stop at timeout, or at the call's deadline if sooner:
// c.WithTimeout(timeout), with ContextTimeoutEnabled set on the clone's
// own options, so that a caller's deadline sooner than the store's
// timeout ends its call (go-redis reads a context's deadline only with
// it). The clone runs none of c's hooks.
func Bounded(c *redis.Client, timeout time.Duration) *redis.Client {
	clone := c.WithTimeout(timeout)
	clone.Options().ContextTimeoutEnabled = true // the clone's copy of c's options
	return clone
}
