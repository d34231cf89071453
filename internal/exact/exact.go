// Package exact holds the bounds that keep rate-limit arithmetic exact in
// both Go and Lua (whose numbers are float64) and a decision's work
// bounded, and the integer divisions every store uses.
package exact

import "time"

// Max bounds the integer products a store computes (quantities times
// microseconds). Below it, float64 arithmetic in Lua is exact.
const Max = 1<<53 - 1

// MaxDuration is the longest duration any parameter (a window, a period,
// a burst tolerance, a queue's MaxDelay, a concurrency TTL), block or mark
// may have: state holds absolute times up to now + MaxDuration, which must
// stay below Max microseconds.
const MaxDuration = 10 * 365 * 24 * time.Hour

// MaxTime is the latest instant a decision can be made at (in 2245): with
// MaxDuration added it is still exact in microseconds.
var MaxTime = time.UnixMicro(Max - MaxDuration.Microseconds())

// MaxChecks is the most checks one decision takes together. One script
// run decides them while Redis serves nobody else: 1,000 GCRA checks take
// about 10 ms, and 20,000 outlast the store's timeout of 100 ms, which
// counts as Redis failing (three such calls mark it down for every
// request). Real stacks have a few rules; an Envoy request, a few
// descriptors.
const MaxChecks = 256

// FloorDiv is floor(a/b) for a >= 0, b > 0.
func FloorDiv(a, b int64) int64 { return a / b }

// CeilDiv is ceil(a/b) for a >= 0, b > 0.
func CeilDiv(a, b int64) int64 { return (a + b - 1) / b }

// CeilMillis rounds µs up to whole milliseconds; negative values are 0.
func CeilMillis(us int64) time.Duration {
	return time.Duration(CeilDiv(max(0, us), 1000)) * time.Millisecond
}

// CeilMicros rounds d up to whole microseconds, the stores' unit.
func CeilMicros(d time.Duration) time.Duration {
	return (d + time.Microsecond - 1).Truncate(time.Microsecond)
}

// RetrySeconds is a wait in whole seconds, rounded up, at least 1: a client
// that obeys it is never early.
func RetrySeconds(wait time.Duration) int64 {
	return max(1, int64((wait+time.Second-1)/time.Second))
}
