package algorithms

import "time"

// FixedWindow counts requests in fixed windows of length Window: aligned to
// multiples of Window since the Unix epoch, or, when Anchored, starting at
// a client's first request after its previous window ended.
//
// A request of cost c is allowed iff count + c <= Limit, where count is what
// the current window has admitted. The count starts at zero at every window
// boundary, so up to 2*Limit can pass around a boundary: 10 per second admits
// 10 requests 1 ms before a boundary and 10 more at it.
//
// Anchored windows keep that bound, but a client cannot time a boundary it
// does not know in advance, and the windows of many clients do not all
// reset at the same instant: at 10 per minute, a first request at 00:00:45
// opens a window until 00:01:45; 10 requests anywhere in it pass, an 11th is
// refused with the wait to 00:01:45, and the next request opens a new
// window.
//
// Remaining is Limit - count. A denied request retries at the window's end;
// the state resets there too. Redis memory: one short string per key (the
// same state either way, so a rule can switch between the two).
type FixedWindow struct {
	Limit    int
	Window   time.Duration
	Anchored bool
}

// Validate reports a non-positive Limit or one too large for exact
// arithmetic, or a Window under 1 ms or over ten years. A fixed window
// counts units and multiplies nothing by its Limit, so any Limit goes with
// any Window: 200,000 a day, 10,000 a month.
func (a FixedWindow) Validate() error {
	if err := validateQuantity("FixedWindow", "Limit", a.Limit); err != nil {
		return err
	}
	return validateDuration("FixedWindow", "Window", a.Window, "Limit", 1)
}

// String returns e.g. "FixedWindow(10 per 1s)" or "FixedWindow(10 per 1s,
// anchored)".
func (a FixedWindow) String() string {
	s := windowedString("FixedWindow", a.Limit, a.Window)
	if a.Anchored {
		s = s[:len(s)-1] + ", anchored)"
	}
	return s
}

// policy is Limit per Window.
func (a FixedWindow) policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }
