package model

import (
	"slices"
	"sort"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// fixedWindow is the specification of fixed_window.lua.
func fixedWindow(a algorithms.FixedWindow, s State, now time.Time, cost int) Outcome {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	start := t - t%w
	if a.Anchored {
		start = t
	}
	var count int64
	// A later start is the current window after the clock stepped back; an
	// anchored window lasts until its start plus the window.
	if s.Exists && (s.Start >= start || (a.Anchored && s.Start+w > t)) {
		start, count = s.Start, s.Count
	}
	toEnd := start + w - t
	var reset int64
	if count > 0 {
		reset = toEnd
	}
	status, retry := verdict(c, limit, count+c <= limit, func() int64 { return toEnd })
	// Quota comes back all at once at the window's end: reset is also next.
	q := quantities{remaining: limit - count, retry: retry, reset: reset, next: reset, after: toEnd, nextAfter: toEnd}
	return outcome(status, q, State{Start: start, Count: count + c}, cost)
}

// slidingLog is the specification of sliding_log.lua; slot is the
// decision's id (0: none), which names the units it writes.
func slidingLog(a algorithms.SlidingLog, s State, now time.Time, cost int, slot int64) Outcome {
	t, w, limit, c := now.UnixMicro(), a.Window.Microseconds(), int64(a.Limit), int64(cost)
	// in is the part of the sorted log inside the window (time > t - w).
	first := sort.Search(len(s.Log), func(i int) bool { return s.Log[i].At > t-w })
	in := s.Log[first:]
	count := int64(len(in))
	newest, next := t-w, int64(0)
	if count > 0 {
		// Quota comes back as the oldest unit in the window leaves it.
		newest, next = in[count-1].At, in[0].At+w-t
	}
	nextAfter := next // the units added now are the oldest when next is 0 or beyond w
	if next == 0 || next > w {
		nextAfter = w
	}
	status, retry := verdict(c, limit, count+c <= limit, func() int64 { return in[count+c-limit-1].At + w - t })
	var nextState State
	if status == Allowed && c > 0 {
		nextState.Log = make([]Unit, 0, count+c)
		from := sort.Search(len(in), func(i int) bool { return in[i].At >= t })
		to := sort.Search(len(in), func(i int) bool { return in[i].At > t })
		// An id-less unit is numbered after the count of the instant's
		// units and after the highest number of its id-less ones.
		seq := int64(to - from)
		for _, u := range in[from:to] {
			if u.Slot == 0 {
				seq = max(seq, u.I)
			}
		}
		nextState.Log = append(nextState.Log, in[:to]...)
		for i := range c {
			u := Unit{At: t, Slot: slot, I: i + 1}
			if slot == 0 {
				u.I += seq
			}
			nextState.Log = append(nextState.Log, u)
		}
		run := nextState.Log[from:]
		slices.SortFunc(run, func(u, v Unit) int {
			if u.Before(v) {
				return -1
			}
			if v.Before(u) {
				return 1
			}
			return 0
		})
		nextState.Log = append(nextState.Log, in[to:]...)
	}
	q := quantities{remaining: limit - count, retry: retry, reset: newest + w - t, next: next, after: max(newest, t) + w - t, nextAfter: nextAfter}
	return outcome(status, q, nextState, cost)
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
	q := quantities{remaining: limit - used, retry: retry, reset: resetAfter(cur), next: swNext(prev, cur, elapsed, w),
		after: resetAfter(cur + c), nextAfter: swNext(prev, cur+c, elapsed, w)}
	return outcome(status, q, State{Start: start, Count: cur + c, Prev: prev}, cost)
}

// swFirst is the smallest elapsed e >= 0 with
// floor(prev * (window - e) / window) <= room, for room >= 0.
func swFirst(prev, room, window int64) int64 {
	if prev <= room {
		return 0
	}
	return exact.FloorDiv(window*(prev-room-1), prev) + 1
}

// swNext is when the estimate first drops by one unit: as prev's weight
// fades, or, with prev's weight gone, as cur fades in the next window.
func swNext(prev, cur, elapsed, w int64) int64 {
	if weighted := exact.FloorDiv(prev*(w-max(0, elapsed)), w); weighted > 0 {
		return swFirst(prev, weighted-1, w) - elapsed
	}
	if cur > 0 {
		return w - elapsed + swFirst(cur, cur-1, w)
	}
	return 0
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
