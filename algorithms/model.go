package algorithms

import "time"

// State is one key's stored state, for the Go models. The zero value is a
// key that does not exist. Each algorithm uses its own fields.
type State struct {
	// Exists is false for a missing (fresh) key.
	Exists bool
	// Start, Count and Prev are the windowed algorithms' window start (µs),
	// current count and, for SlidingWindow, the previous window's count.
	Start, Count, Prev int64
	// Level and Updated are the buckets' level (in units scaled by the
	// period in µs) and last update (µs).
	Level, Updated int64
	// TAT is GCRA's theoretical arrival time (µs).
	TAT int64
	// Log is SlidingLog's admitted units, times in µs, sorted.
	Log []int64
}

// Step is the outcome of one request against one state, computed by an
// algorithm's Step method: the executable specification of the Lua script.
type Step struct {
	// Held is the result if nothing is written: the request is denied, or
	// another rule of its stack denied it. Held.Allowed tells whether this
	// rule alone would admit the request.
	Held Result
	// Admitted is the result once Next is stored (valid when Held.Allowed).
	Admitted Result
	// Next is the state to store when the request is admitted with a
	// positive cost.
	Next State
	// TTL is how long Next matters; past it, Next behaves as a missing key.
	TTL time.Duration
}

// outcome builds a Step from the integer quantities every algorithm
// computes, as stack.lua reports them. status is 1 allowed, 0 denied, -1
// impossible; retry, reset and after are µs.
func outcome(limit int, status int, remaining, retry, reset int64, next State, cost int, after int64) Step {
	held := Result{Allowed: status == 1, Limit: limit, Remaining: int(max(0, remaining)), ResetAfter: ceilMillis(reset)}
	switch {
	case status < 0:
		held.RetryAfter = Never
	case retry > 0:
		held.RetryAfter = ceilMillis(retry)
	}
	st := Step{Held: held}
	if status == 1 {
		st.Admitted = held
		if cost > 0 {
			st.Admitted.Remaining -= cost
			st.Admitted.ResetAfter = ceilMillis(after)
			st.Next = next
			st.Next.Exists = true
			st.TTL = max(time.Millisecond, ceilMillis(after))
		}
	}
	return st
}

// floorDiv is floor(a/b) for a >= 0, b > 0.
func floorDiv(a, b int64) int64 { return a / b }

// ceilDiv is ceil(a/b) for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// ceilMillis rounds µs up to whole milliseconds.
func ceilMillis(us int64) time.Duration {
	return time.Duration(ceilDiv(max(0, us), 1000)) * time.Millisecond
}
