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

// Validate reports a non-positive Limit, a Window under 1 ms, or a
// Limit*Window too large for exact arithmetic.
func (a FixedWindow) Validate() error { return validateWindowed("FixedWindow", a.Limit, a.Window) }

// String returns e.g. "FixedWindow(10 per 1s)".
func (a FixedWindow) String() string { return windowedString("FixedWindow", a.Limit, a.Window) }

// policy is Limit per Window.
func (a FixedWindow) policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }
