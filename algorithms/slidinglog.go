package algorithms

import (
	"fmt"
	"sort"
	"time"
)

// MaxSlidingLogLimit bounds SlidingLog.Limit: the log stores one entry per
// admitted unit, so Limit bounds its memory.
const MaxSlidingLogLimit = 100_000

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
// (so Limit is capped at MaxSlidingLogLimit); the most exact and the most
// expensive algorithm here.
type SlidingLog struct {
	Limit  int
	Window time.Duration
}

// Validate reports a non-positive or oversized Limit, a Window under
// MinPeriod, or a Limit*Window too large for exact arithmetic.
func (a SlidingLog) Validate() error {
	if a.Limit > MaxSlidingLogLimit {
		return fmt.Errorf("%w: SlidingLog.Limit must be at most %d, got %d", ErrInvalid, MaxSlidingLogLimit, a.Limit)
	}
	return validateWindowed("SlidingLog", a.Limit, a.Window)
}

// String returns e.g. "SlidingLog(5 per 1m0s)".
func (a SlidingLog) String() string { return windowedString("SlidingLog", a.Limit, a.Window) }

// Policy is Limit per Window.
func (a SlidingLog) Policy() Policy { return Policy{Quota: a.Limit, Window: a.Window} }

// Step is the executable specification of sliding_log.lua.
func (a SlidingLog) Step(s State, now time.Time, cost int) Step {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	// in is the part of the sorted log inside the window (time > t - w).
	first := sort.Search(len(s.Log), func(i int) bool { return s.Log[i] > t-w })
	in := s.Log[first:]
	count := int64(len(in))
	newest := t - w
	if count > 0 {
		newest = in[count-1]
	}
	status, retry := 1, int64(0)
	switch {
	case c > limit:
		status = -1
	case count+c > limit:
		status, retry = 0, in[count+c-limit-1]+w-t
	}
	var next State
	if status == 1 && c > 0 {
		next.Log = make([]int64, 0, count+c)
		at := sort.Search(len(in), func(i int) bool { return in[i] > t })
		next.Log = append(next.Log, in[:at]...)
		for range c {
			next.Log = append(next.Log, t)
		}
		next.Log = append(next.Log, in[at:]...)
	}
	return outcome(a.Limit, status, limit-count, retry, newest+w-t, next, cost, max(newest, t)+w-t)
}
