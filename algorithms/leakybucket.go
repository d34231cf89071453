package algorithms

import "time"

// LeakyBucket is the leaky bucket as a meter: each admitted unit adds one to
// the level, which drains continuously at Rate units per Period. A new bucket
// starts empty.
//
// A request of cost c is allowed iff level + c <= Capacity. With Capacity 5
// draining 1 per second, 10 requests at t=0 admit 5, and 10 more at t=3s
// admit 3.
//
// Remaining is floor(Capacity - level). RetryAfter is the time to drain
// enough room; ResetAfter the time until the bucket is empty. The level is
// kept exactly. Redis memory: one short string per key. (As a meter it admits
// exactly what a TokenBucket of the same parameters admits; it is offered
// under the name people look for.)
type LeakyBucket struct {
	Capacity int
	Rate     int
	Period   time.Duration
}

// Validate reports a non-positive Capacity or Rate, a Period under
// 1 ms, or a Capacity*Period too large for exact arithmetic.
func (a LeakyBucket) Validate() error {
	return validateBucket("LeakyBucket", "Capacity", a.Capacity, a.Rate, a.Period)
}

// String returns e.g. "LeakyBucket(capacity 5, 1 per 1s)".
func (a LeakyBucket) String() string {
	return bucketString("LeakyBucket", a.Capacity, a.Rate, a.Period)
}

// policy is Capacity per the time a full bucket takes to drain.
func (a LeakyBucket) policy() Policy { return refillPolicy(a.Capacity, a.Rate, a.Period) }
