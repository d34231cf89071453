package algorithms

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// ErrInvalid is wrapped by every Validate error.
var ErrInvalid = errors.New("ratelimit: invalid algorithm")

// Never is the RetryAfter of a request whose cost exceeds what the rule can
// ever admit: the largest Duration, so waiting does not help and waits
// compare without special cases (like x/time/rate's InfDuration).
const Never time.Duration = math.MaxInt64

// minPeriod is the shortest window or period accepted.
const minPeriod = time.Millisecond

// Algorithm is one of FixedWindow, SlidingLog, SlidingWindow, TokenBucket,
// LeakyBucket, GCRA, and the shaping kinds Queue and Concurrency. The set
// is closed: stores implement exactly these, in Lua and in Go.
type Algorithm interface {
	// Validate reports a configuration that no store can apply exactly.
	Validate() error
	// String describes the configuration, e.g. "GCRA(5 per 1s, burst 10)".
	String() string
	// policy is what PolicyOf reports; unexported, so that no other type
	// can pose as an algorithm.
	policy() Policy
}

// Policy is what a rule promises, in the terms of rate-limit headers: Quota
// units per Window. For the windowed algorithms it is Limit per Window; for
// the buckets and GCRA it is the burst size per the time an empty bucket
// takes to refill completely.
type Policy struct {
	Quota  int
	Window time.Duration
	// Unit is the draft's quota unit: "" for requests (the default),
	// "concurrent-requests" for Concurrency.
	Unit string
}

// InFlight reports whether the policy's quota is of requests in flight
// (Concurrency): units held while requests run and given back when they
// end, rather than spent. It is the one test of that in the library.
func (p Policy) InFlight() bool { return p.Unit == concurrentRequests }

// concurrentRequests is the quota unit of requests in flight.
const concurrentRequests = "concurrent-requests"

// PolicyOf returns the quota and window a rate-limit header advertises for
// a; the zero Policy for nil, or a nil pointer to an algorithm.
func PolicyOf(a Algorithm) Policy {
	if a == nil {
		return Policy{}
	}
	if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer && v.IsNil() {
		return Policy{}
	}
	return a.policy()
}

// Result is the outcome of one rule for one request. Being limited is not an
// error: Allowed is false and RetryAfter says for how long.
type Result struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Remaining is what could still be admitted now, after this request.
	Remaining int
	// RetryAfter is how long until a request of the same cost would be
	// admitted if nothing else happened: 0 when allowed, Never when the cost
	// exceeds what the rule admits at once (its Policy's Quota).
	RetryAfter time.Duration
	// ResetAfter is how long until the rule's state is back to fresh.
	ResetAfter time.Duration
	// NextAfter is how long until more quota is available than Remaining
	// (the draft RateLimit header's "t"): a unit's refill for the buckets
	// and GCRA, the oldest unit leaving a sliding log, the weighted count
	// dropping by one for the sliding window, the window's end for the
	// fixed window. 0 when no quota is in use.
	NextAfter time.Duration
	// Delay is how long an allowed request waits for its turn before it is
	// served: a Queue's wait, 0 for the other algorithms.
	Delay time.Duration
}

// validateQuantity checks a count that must be positive.
func validateQuantity(algo, field string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%w: %s.%s must be positive, got %d", ErrInvalid, algo, field, v)
	}
	if v > exact.Max {
		return fmt.Errorf("%w: %s.%s is too large: %d", ErrInvalid, algo, field, v)
	}
	return nil
}

// validateDuration checks that d is a usable window or period and that
// quantity*d, in microseconds, stays exact.
func validateDuration(algo, field string, d time.Duration, quantityField string, quantity int) error {
	if d < minPeriod {
		return fmt.Errorf("%w: %s.%s must be at least %v, got %v", ErrInvalid, algo, field, minPeriod, d)
	}
	if d > exact.MaxDuration {
		return fmt.Errorf("%w: %s.%s must be at most %v, got %v", ErrInvalid, algo, field, exact.MaxDuration, d)
	}
	us := d.Microseconds()
	if us > exact.Max/int64(quantity) {
		return fmt.Errorf("%w: %s.%s of %v times %s %d overflows exact arithmetic", ErrInvalid, algo, field, d, quantityField, quantity)
	}
	return nil
}
