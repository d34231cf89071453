package algorithms

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalid is wrapped by every Validate error.
var ErrInvalid = errors.New("ratelimit: invalid algorithm")

// Never is the RetryAfter of a request whose cost exceeds what the rule can
// ever admit: waiting does not help, so no finite wait is reported.
const Never time.Duration = -1

// MaxExact bounds the integer products a store computes (quantities times
// microseconds). Below it, float64 arithmetic in Lua is exact.
const MaxExact = 1<<53 - 1

// MinPeriod is the shortest window or period accepted.
const MinPeriod = time.Millisecond

// MaxSpan is the longest window, period or burst tolerance accepted: state
// holds absolute times up to now + MaxSpan, which must stay below MaxExact
// microseconds.
const MaxSpan = 10 * 365 * 24 * time.Hour

// MaxTime is the latest instant a decision can be made at (in 2245): with
// MaxSpan added it is still exact in microseconds.
var MaxTime = time.UnixMicro(MaxExact - MaxSpan.Microseconds())

// Algorithm is one of FixedWindow, SlidingLog, SlidingWindow, TokenBucket,
// LeakyBucket or GCRA.
type Algorithm interface {
	// Validate reports a configuration that no store can apply exactly.
	Validate() error
	// String describes the configuration, e.g. "GCRA(5 per 1s, burst 10)".
	String() string
	// Policy is the quota and window advertised in response headers.
	Policy() Policy
	// Step is the algorithm's executable specification: it decides a
	// request of cost at now (microsecond precision) against s without
	// changing s. The Lua scripts compute exactly the same.
	Step(s State, now time.Time, cost int) Step
}

// Policy is what a rule promises, in the terms of rate-limit headers: Quota
// units per Window. For the windowed algorithms it is Limit per Window; for
// the buckets and GCRA it is the burst size per the time an empty bucket
// takes to refill completely.
type Policy struct {
	Quota  int
	Window time.Duration
}

// Result is the outcome of one rule for one request. Being limited is not an
// error: Allowed is false and RetryAfter says for how long.
type Result struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the most the rule admits at once (Limit, Capacity or Burst).
	Limit int
	// Remaining is what could still be admitted now, after this request.
	Remaining int
	// RetryAfter is how long until a request of the same cost would be
	// admitted if nothing else happened: 0 when allowed, Never when the cost
	// exceeds Limit.
	RetryAfter time.Duration
	// ResetAfter is how long until the rule's state is back to fresh.
	ResetAfter time.Duration
}

// Impossible reports whether the request was denied because its cost exceeds
// what the rule can ever admit.
func (r Result) Impossible() bool { return r.RetryAfter == Never }

// validateQuantity checks a count that must be positive.
func validateQuantity(algo, field string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%w: %s.%s must be positive, got %d", ErrInvalid, algo, field, v)
	}
	if v > MaxExact {
		return fmt.Errorf("%w: %s.%s is too large: %d", ErrInvalid, algo, field, v)
	}
	return nil
}

// validateSpan checks that d is a usable window or period and that
// quantity*d, in microseconds, stays exact.
func validateSpan(algo, field string, d time.Duration, quantityField string, quantity int) error {
	if d < MinPeriod {
		return fmt.Errorf("%w: %s.%s must be at least %v, got %v", ErrInvalid, algo, field, MinPeriod, d)
	}
	if d > MaxSpan {
		return fmt.Errorf("%w: %s.%s must be at most %v, got %v", ErrInvalid, algo, field, MaxSpan, d)
	}
	us := d.Microseconds()
	if us > MaxExact/int64(quantity) {
		return fmt.Errorf("%w: %s.%s of %v times %s %d overflows exact arithmetic", ErrInvalid, algo, field, d, quantityField, quantity)
	}
	return nil
}
