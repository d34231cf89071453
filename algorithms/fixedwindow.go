package algorithms

import "time"

// FixedWindow counts requests in windows aligned to multiples of Window since
// the Unix epoch.
//
// A request of cost c is allowed iff count + c <= Limit, where count is what
// the current window has admitted. The count starts at zero at every window
// boundary, so up to 2*Limit can pass around a boundary: 10 per second admits
// 10 requests 1 ms before a boundary and 10 more at it.
//
// Remaining is Limit - count. A denied request retries at the next boundary;
// the state resets there too. Redis memory: one short string per key.
type FixedWindow struct {
	Limit  int
	Window time.Duration
}

// Validate reports a non-positive Limit, a Window under MinPeriod, or a
// Limit*Window too large for exact arithmetic.
func (a FixedWindow) Validate() error { return validateWindowed("FixedWindow", a.Limit, a.Window) }

// String returns e.g. "FixedWindow(10 per 1s)".
func (a FixedWindow) String() string { return windowedString("FixedWindow", a.Limit, a.Window) }

// Policy is Limit per Window.
func (a FixedWindow) Policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }

// Step is the executable specification of fixed_window.lua.
func (a FixedWindow) Step(s State, now time.Time, cost int) Step {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	start := t - t%w
	var count int64
	if s.Exists && s.Start == start {
		count = s.Count
	}
	toEnd := start + w - t
	var reset int64
	if count > 0 {
		reset = toEnd
	}
	status, retry := 1, int64(0)
	switch {
	case c > limit:
		status = -1
	case count+c > limit:
		status, retry = 0, toEnd
	}
	return outcome(a.Limit, status, limit-count, retry, reset, State{Start: start, Count: count + c}, cost, toEnd)
}
