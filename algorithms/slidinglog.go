package algorithms

import (
	"fmt"
	"time"
)

// maxSlidingLogLimit bounds SlidingLog.Limit: the log stores one entry per
// admitted unit, so Limit bounds its memory.
const maxSlidingLogLimit = 100_000

// SlidingLog keeps an exact log of admitted units over the rolling window
// (now-Window, now].
//
// A request of cost c is allowed iff entries + c <= Limit, where entries are
// the units logged in the window. Each admitted unit is its own entry, so two
// requests in the same microsecond are both counted. No window of length
// Window ever holds more than Limit admitted units.
//
// RetryAfter is exact: the time until enough of the oldest entries leave the
// window. Redis memory: one sorted-set entry per admitted unit, at most Limit
// (so Limit is capped at 100,000); the most exact and the most
// expensive algorithm here.
type SlidingLog struct {
	Limit  int
	Window time.Duration
}

// Validate reports a non-positive or oversized Limit, a Window under
// 1 ms, or a Limit*Window too large for exact arithmetic.
func (a SlidingLog) Validate() error { return validateLog("SlidingLog", "Window", a.Limit, a.Window) }

// validateLog checks the Limit and the window of an algorithm kept as a
// log of entries (SlidingLog, Concurrency), whose Limit bounds its memory.
func validateLog(algo, windowField string, limit int, window time.Duration) error {
	if limit > maxSlidingLogLimit {
		return fmt.Errorf("%w: %s.Limit must be at most %d, got %d", ErrInvalid, algo, maxSlidingLogLimit, limit)
	}
	if err := validateQuantity(algo, "Limit", limit); err != nil {
		return err
	}
	return validateDuration(algo, windowField, window, "Limit", limit)
}

// String returns e.g. "SlidingLog(5 per 1m0s)".
func (a SlidingLog) String() string { return windowedString("SlidingLog", a.Limit, a.Window) }

// policy is Limit per Window.
func (a SlidingLog) policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }
