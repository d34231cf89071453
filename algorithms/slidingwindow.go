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

// Validate reports a non-positive Limit, a Window under MinPeriod, or a
// Limit*Window too large for exact arithmetic.
func (a SlidingWindow) Validate() error {
	return validateWindowed("SlidingWindow", a.Limit, a.Window)
}

// String returns e.g. "SlidingWindow(100 per 1m0s)".
func (a SlidingWindow) String() string { return windowedString("SlidingWindow", a.Limit, a.Window) }

// Policy is Limit per Window.
func (a SlidingWindow) Policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }

// swFirst is the smallest elapsed e >= 0 with
// floor(prev * (window - e) / window) <= room, for room >= 0.
func swFirst(prev, room, window int64) int64 {
	if prev <= room {
		return 0
	}
	return floorDiv(window*(prev-room-1), prev) + 1
}

// swRetry is the wait until a cost c is admitted: within the current window
// when enough of prev's weight fades, else in the next one, where cur
// becomes the weighted count.
func swRetry(prev, cur, elapsed, limit, c, w int64) int64 {
	if room := limit - cur - c; room >= 0 {
		if e := swFirst(prev, room, w); e < w {
			return e - elapsed
		}
	}
	return w - elapsed + min(w, swFirst(cur, limit-c, w))
}

// Step is the executable specification of sliding_window.lua.
func (a SlidingWindow) Step(s State, now time.Time, cost int) Step {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	start := t - t%w
	elapsed := t - start
	var cur, prev int64
	switch {
	case s.Exists && s.Start == start:
		cur, prev = s.Count, s.Prev
	case s.Exists && s.Start == start-w:
		prev = s.Count
	}
	resetAfter := func(cur int64) int64 {
		if cur > 0 {
			return w - elapsed + swFirst(cur, 0, w)
		}
		return max(0, swFirst(prev, 0, w)-elapsed)
	}
	used := floorDiv(prev*(w-elapsed), w) + cur
	status, retry := 1, int64(0)
	switch {
	case c > limit:
		status = -1
	case used+c > limit:
		status, retry = 0, swRetry(prev, cur, elapsed, limit, c, w)
	}
	return outcome(a.Limit, status, limit-used, retry, resetAfter(cur),
		State{Start: start, Count: cur + c, Prev: prev}, cost, resetAfter(cur+c))
}
