package algorithms

import (
	"fmt"
	"time"
)

// Concurrency limits requests in flight: at most Limit slots are held at
// once. A slot is taken in the same atomic decision as the other rules of
// a stack, and given back when the request ends (the middleware does so
// when the handler returns, also on panic; Limiter.Settle with a final
// cost of 0 does it by hand). A slot never given back (the process died)
// expires after TTL, so a crash holds capacity for at most that long.
//
// It is kept like a SlidingLog whose window is TTL: one sorted-set entry
// per slot (at most Limit, capped at 100,000), and a request of cost c is
// allowed iff live slots + c <= Limit. RetryAfter is the time until
// enough of the oldest slots expire: an upper bound, since slots are
// usually given back sooner. Headers report it with the quota unit
// "concurrent-requests".
type Concurrency struct {
	Limit int
	TTL   time.Duration
}

// Validate reports a non-positive or oversized Limit, or a TTL under
// 1 ms or too large for exact arithmetic.
func (a Concurrency) Validate() error { return validateLog("Concurrency", "TTL", a.Limit, a.TTL) }

// String returns e.g. "Concurrency(10 in flight, ttl 30s)".
func (a Concurrency) String() string {
	return fmt.Sprintf("Concurrency(%d in flight, ttl %v)", a.Limit, a.TTL)
}

// policy is Limit concurrent requests.
func (a Concurrency) policy() Policy {
	return Policy{Quota: a.Limit, Window: a.TTL, Unit: concurrentRequests}
}
