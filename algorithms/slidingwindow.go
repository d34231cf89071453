package algorithms

import "time"

// SlidingWindow is the sliding window counter: it keeps the counts of the
// current and the previous aligned window, and weighs the previous one by the
// part of it still inside the rolling window.
//
// With elapsed the time since the current window began, a request of cost c
// is allowed iff
//
//	floor(prev * (Window - elapsed) / Window) + cur + c <= Limit
//
// With Limit 100 per minute, cur 80 and prev 40, a request 30 s into the
// window is denied (estimate 100) and one 40 s in is allowed (estimate 93).
//
// Remaining is Limit minus the estimate. RetryAfter is the exact first instant
// the inequality holds again, which may lie in the next window. Redis memory:
// one short string per key. Accuracy: an approximation of SlidingLog that
// assumes the previous window's requests were evenly spread.
type SlidingWindow struct {
	Limit  int
	Window time.Duration
}

// Validate reports a non-positive Limit, a Window under 1 ms, or a
// Limit*Window too large for exact arithmetic.
func (a SlidingWindow) Validate() error {
	return validateWindowed("SlidingWindow", a.Limit, a.Window)
}

// String returns e.g. "SlidingWindow(100 per 1m0s)".
func (a SlidingWindow) String() string { return windowedString("SlidingWindow", a.Limit, a.Window) }

// policy is Limit per Window.
func (a SlidingWindow) policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }
