package model

import (
	"sort"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// fixedWindow is the specification of fixed_window.lua.
func fixedWindow(a algorithms.FixedWindow, s State, now time.Time, cost int) Outcome {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	start := t - t%w
	var count int64
	if s.Exists && s.Start >= start { // later: the clock stepped back
		start, count = s.Start, s.Count
	}
	toEnd := start + w - t
	var reset int64
	if count > 0 {
		reset = toEnd
	}
	status, retry := verdict(c, limit, count+c <= limit, func() int64 { return toEnd })
	return outcome(a.Limit, status, limit-count, retry, reset, State{Start: start, Count: count + c}, cost, toEnd)
}

// slidingLog is the specification of sliding_log.lua.
func slidingLog(a algorithms.SlidingLog, s State, now time.Time, cost int) Outcome {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	// in is the part of the sorted log inside the window (time > t - w).
	first := sort.Search(len(s.Log), func(i int) bool { return s.Log[i] > t-w })
	in := s.Log[first:]
	count := int64(len(in))
	newest := t - w
	if count > 0 {
		newest = in[count-1]
	}
	status, retry := verdict(c, limit, count+c <= limit, func() int64 { return in[count+c-limit-1] + w - t })
	var next State
	if status == Allowed && c > 0 {
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

// slidingWindow is the specification of sliding_window.lua.
func slidingWindow(a algorithms.SlidingWindow, s State, now time.Time, cost int) Outcome {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	start := t - t%w
	var cur, prev int64
	switch {
	case s.Exists && s.Start >= start: // later: the clock stepped back
		start, cur, prev = s.Start, s.Count, s.Prev
	case s.Exists && s.Start == start-w:
		prev = s.Count
	}
	elapsed := t - start // negative after a step back
	resetAfter := func(cur int64) int64 {
		if cur > 0 {
			return w - elapsed + swFirst(cur, 0, w)
		}
		return max(0, swFirst(prev, 0, w)-elapsed)
	}
	used := exact.FloorDiv(prev*(w-max(0, elapsed)), w) + cur
	status, retry := verdict(c, limit, used+c <= limit, func() int64 { return swRetry(prev, cur, elapsed, limit, c, w) })
	return outcome(a.Limit, status, limit-used, retry, resetAfter(cur),
		State{Start: start, Count: cur + c, Prev: prev}, cost, resetAfter(cur+c))
}

// swFirst is the smallest elapsed e >= 0 with
// floor(prev * (window - e) / window) <= room, for room >= 0.
func swFirst(prev, room, window int64) int64 {
	if prev <= room {
		return 0
	}
	return exact.FloorDiv(window*(prev-room-1), prev) + 1
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
