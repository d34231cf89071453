package algorithms

import (
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// Queue is a leaky bucket as a queue: requests leave at Rate per Period,
// each delayed until its turn instead of refused, and only a request whose
// wait would exceed MaxDelay is denied. No queue process runs: each
// admitted request reserves the next free turn (like GCRA's theoretical
// arrival time, kept in one string per key) and learns its wait,
// Result.Delay, which the middleware (or Limiter.Wait) sleeps before
// serving it.
//
// A unit's turn lasts T = Period/Rate, rounded up to a whole microsecond
// (so a queue is slower than Rate by less than 1 µs per unit). A request
// of cost c arriving when the queue's tail is at tat starts at
// start = max(tat, now), takes c turns, and is allowed iff its last turn
// starts within MaxDelay: start + (c-1)*T - now <= MaxDelay. Requests
// arriving together start T apart, never early; a request that gives up
// before its turn (Limiter.Settle with 0) gives its turns back, and the
// next requests to arrive take them.
//
// The Quota of its Policy is the turns that start within MaxDelay of an
// empty queue, floor(MaxDelay/T) + 1; Remaining counts the turns still
// free within MaxDelay. A cost above the Quota is denied with RetryAfter
// Never.
type Queue struct {
	Rate     int
	Period   time.Duration
	MaxDelay time.Duration
}

// Validate reports a non-positive Rate, a Period under 1 ms, a Rate above
// one per microsecond, or a MaxDelay outside 0 to 10 years, or one that,
// with a turn, exceeds 10 years: the queue's tail runs up to MaxDelay
// plus one turn ahead of now, and state must stay within 10 years of it.
func (a Queue) Validate() error {
	if err := validateQuantity("Queue", "Rate", a.Rate); err != nil {
		return err
	}
	if err := validateDuration("Queue", "Period", a.Period, "Rate", 1); err != nil {
		return err
	}
	if int64(a.Rate) > a.Period.Microseconds() {
		return fmt.Errorf("%w: Queue.Rate of %d per %v is more than one per microsecond", ErrInvalid, a.Rate, a.Period)
	}
	if a.MaxDelay < 0 || a.MaxDelay > exact.MaxDuration {
		return fmt.Errorf("%w: Queue.MaxDelay must be between 0 and %v, got %v", ErrInvalid, exact.MaxDuration, a.MaxDelay)
	}
	if a.MaxDelay+a.turn() > exact.MaxDuration {
		return fmt.Errorf("%w: Queue.MaxDelay of %v plus a turn of %v is more than %v", ErrInvalid, a.MaxDelay, a.turn(), exact.MaxDuration)
	}
	return nil
}

// String returns e.g. "Queue(10 per 1s, max delay 2s)".
func (a Queue) String() string {
	return fmt.Sprintf("Queue(%d per %v, max delay %v)", a.Rate, a.Period, a.MaxDelay)
}

// turn is T, the time between two requests' turns, in whole microseconds
// (rounded up).
func (a Queue) turn() time.Duration {
	return time.Duration(exact.CeilDiv(a.Period.Microseconds(), int64(a.Rate))) * time.Microsecond
}

// policy is the requests an empty queue takes per the time they take to
// leave.
func (a Queue) policy() Policy {
	n := int(a.MaxDelay/a.turn()) + 1
	return Policy{Quota: n, Window: time.Duration(n) * a.turn()}
}
