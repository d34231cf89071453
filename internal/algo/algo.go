// Package algo is the table of the algorithms: for each, its code, its Lua
// files, and how its parameters are encoded as integers and in key names.
// The limiter names keys with it and validates algorithms through it
// (Describe); the Redis store's scripts are assembled and called from it
// (package script). Adding an algorithm touches this table, its .lua file,
// its value type in package algorithms and its Go model.
package algo

import (
	"fmt"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Row is one algorithm of the table.
type Row struct {
	// Code names the algorithm in ARGV and in key names.
	Code string
	// File defines algorithms[code], commits[code] and refunds[code].
	File string
	// Helpers are the helper files it uses, besides lib.lua.
	Helpers []string
	// keyed are the indices of the parameters the stored state depends on
	// (the window the windows' starts are aligned to and the log trims by,
	// a concurrency limit's lease): keys carry their values, so that state
	// kept under one value is never read, trimmed or given back under
	// another. A bucket's state records the parameters it was written under
	// instead, and GCRA's and a queue's are times: every plan of theirs
	// shares one key.
	keyed []int
	// params encodes a's three integer parameters; ok is false when a is
	// another algorithm.
	params func(a algorithms.Algorithm) (p [3]int64, ok bool)
}

// row builds a table row whose parameters come from a T.
func row[T algorithms.Algorithm](code, file string, helpers []string, keyed []int, params func(T) [3]int64) Row {
	return Row{Code: code, File: file, Helpers: helpers, keyed: keyed, params: func(a algorithms.Algorithm) ([3]int64, bool) {
		t, ok := a.(T)
		if !ok {
			return [3]int64{}, false
		}
		return params(t), true
	}}
}

func us(d time.Duration) int64 { return d.Microseconds() }

// window is the keyed parameter of the rows that have one: the second (a
// window or a lease).
var window = []int{1}

// Table lists the algorithms; a script's Mask has bit i for Table[i].
// Helper files are concatenated in the order they first appear here.
var Table = []Row{
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
	row("tb", "token_bucket.lua", []string{"state.lua", "verdict.lua", "ledger.lua", "meter.lua"}, nil, func(a algorithms.TokenBucket) [3]int64 {
		return [3]int64{int64(a.Capacity), int64(a.Rate), us(a.Period)}
	}),
	row("lb", "leaky_bucket.lua", []string{"state.lua", "verdict.lua", "ledger.lua", "meter.lua"}, nil, func(a algorithms.LeakyBucket) [3]int64 {
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

// Desc is a valid algorithm as keys and scripts name it.
type Desc struct {
	// Index is the algorithm's row in Table.
	Index int
	// KeySuffix ends the keys of the algorithm's state: the code, then the
	// parameters its stored state depends on (the window of the windows and
	// the log, in µs: "sw60000000"; the lease of a concurrency limit), so
	// that a limit whose window changes starts afresh instead of
	// misreading, trimming or giving back into its state. The buckets, GCRA
	// and a queue have the code alone ("tb").
	KeySuffix string
	// Params identifies the algorithm and its parameters ("gc:5:1000000:10":
	// the code and the three integer parameters). It is the rule's
	// argument to the scripts.
	Params string
}

// Describe validates alg and describes it. An algorithm is a value: a
// pointer to one (nil or not) is refused before any of its methods runs.
func Describe(alg algorithms.Algorithm) (Desc, error) {
	if alg == nil {
		return Desc{}, fmt.Errorf("%w: no algorithm", algorithms.ErrInvalid)
	}
	for i, r := range Table {
		p, ok := r.params(alg)
		if !ok {
			continue
		}
		if err := alg.Validate(); err != nil {
			return Desc{}, err
		}
		args := [3]string{strconv.FormatInt(p[0], 10), strconv.FormatInt(p[1], 10), strconv.FormatInt(p[2], 10)}
		suffix := r.Code
		for j, k := range r.keyed {
			if j > 0 {
				suffix += "-"
			}
			suffix += args[k]
		}
		return Desc{Index: i, KeySuffix: suffix, Params: r.Code + ":" + args[0] + ":" + args[1] + ":" + args[2]}, nil
	}
	return Desc{}, fmt.Errorf("%w: %T is a pointer: pass the algorithm by value", algorithms.ErrInvalid, alg)
}
