package algorithms

import "time"

// TokenBucket holds up to Capacity tokens. A new bucket starts full and
// refills continuously at Rate tokens per Period (computed lazily at each
// request, no timers).
//
// A request of cost c is allowed iff tokens >= c, and takes c tokens. With
// Capacity 10 and 5 per second, 15 requests at t=0 admit 10, and 10 more at
// t=1s admit 5.
//
// Remaining is floor(tokens). RetryAfter is the time to refill the missing
// tokens; ResetAfter the time until the bucket is full. Tokens are kept
// exactly (in units of 1/Period_µs of a token). Redis memory: one short string
// per key.
type TokenBucket struct {
	Capacity int
	Rate     int
	Period   time.Duration
}

// Validate reports a non-positive Capacity or Rate, a Period under
// 1 ms, or a Capacity*Period too large for exact arithmetic.
func (a TokenBucket) Validate() error {
	return validateBucket("TokenBucket", "Capacity", a.Capacity, a.Rate, a.Period)
}

// String returns e.g. "TokenBucket(capacity 10, 5 per 1s)".
func (a TokenBucket) String() string {
	return bucketString("TokenBucket", a.Capacity, a.Rate, a.Period)
}

// policy is Capacity per the time an empty bucket takes to fill.
func (a TokenBucket) policy() Policy { return refillPolicy(a.Capacity, a.Rate, a.Period) }
