// Package script assembles the Redis scripts from the Lua sources in package
// lua, encodes their arguments and decodes their replies.
//
// One table (algorithmTable) lists every algorithm: its code, its .lua file,
// the helper files it needs and how its parameters are encoded. It drives
// the masks, the script for each set of algorithms and the encoders, so
// adding an algorithm touches that table, its .lua file, its value type in
// package algorithms and its Go model.
package script

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// algorithm is one row of the table.
type algorithm struct {
	// code names the algorithm in ARGV and in key names.
	code string
	// file defines algorithms[code], commits[code] and refunds[code].
	file string
	// helpers are the helper files it uses, besides lib.lua.
	helpers []string
	// keyed are the indices of the parameters the stored state depends on
	// (the window the windows' starts are aligned to and the log trims by,
	// a concurrency limit's lease, all three of a bucket's, whose give-backs
	// count on its capacity and rate): keys carry their values, so that
	// state kept under one value is never read, trimmed or given back under
	// another.
	keyed []int
	// params encodes a's three integer parameters; ok is false when a is
	// another algorithm.
	params func(a algorithms.Algorithm) (p [3]int64, ok bool)
}

// row builds a table row whose parameters come from a T.
func row[T algorithms.Algorithm](code, file string, helpers []string, keyed []int, params func(T) [3]int64) algorithm {
	return algorithm{code: code, file: file, helpers: helpers, keyed: keyed, params: func(a algorithms.Algorithm) ([3]int64, bool) {
		t, ok := a.(T)
		if !ok {
			return [3]int64{}, false
		}
		return params(t), true
	}}
}

func us(d time.Duration) int64 { return d.Microseconds() }

// window and all are rows' keyed parameters: the second (a window or a
// lease), or all three.
var window, all = []int{1}, []int{0, 1, 2}

// algorithmTable lists the algorithms; bit i of a Mask stands for row i.
// Helper files are concatenated in the order they first appear here.
var algorithmTable = []algorithm{
	row("fw", "fixed_window.lua", []string{"state.lua"}, window, func(a algorithms.FixedWindow) [3]int64 {
		anchored := int64(0)
		if a.Anchored {
			anchored = 1
		}
		return [3]int64{int64(a.Limit), us(a.Window), anchored}
	}),
	row("sl", "sliding_log.lua", nil, window, func(a algorithms.SlidingLog) [3]int64 {
		return [3]int64{int64(a.Limit), us(a.Window), 0}
	}),
	row("sw", "sliding_window.lua", []string{"state.lua"}, window, func(a algorithms.SlidingWindow) [3]int64 {
		return [3]int64{int64(a.Limit), us(a.Window), 0}
	}),
	row("tb", "token_bucket.lua", []string{"state.lua", "verdict.lua", "ledger.lua", "meter.lua"}, all, func(a algorithms.TokenBucket) [3]int64 {
		return [3]int64{int64(a.Capacity), int64(a.Rate), us(a.Period)}
	}),
	row("lb", "leaky_bucket.lua", []string{"state.lua", "verdict.lua", "ledger.lua", "meter.lua"}, all, func(a algorithms.LeakyBucket) [3]int64 {
		return [3]int64{int64(a.Capacity), int64(a.Rate), us(a.Period)}
	}),
	row("gc", "gcra.lua", []string{"verdict.lua", "ledger.lua"}, nil, func(a algorithms.GCRA) [3]int64 {
		return [3]int64{int64(a.Rate), us(a.Period), int64(a.Burst)}
	}),
	row("qu", "queue.lua", []string{"ledger.lua"}, nil, func(a algorithms.Queue) [3]int64 {
		return [3]int64{int64(a.Rate), us(a.Period), us(a.MaxDelay)}
	}),
	// A concurrency limit runs the sliding log's code under its own key.
	row("cc", "sliding_log.lua", nil, window, func(a algorithms.Concurrency) [3]int64 {
		return [3]int64{int64(a.Limit), us(a.Lease), 0}
	}),
}
