// Package algo is the table of the algorithms: for each, its code, its Lua
// files, how its parameters are encoded as integers and in key names, and
// its facts (Facts: leasable, held in flight, window-bound, counted in
// units, keyed by its code (and epochMark) alone; its Refill). The limiter
// names keys with it and validates algorithms through it (Describe); the
// Redis store's scripts are assembled and called from it (package
// script). Outside this table, package algorithms and the Go models
// (internal/model), no code switches on or asserts an algorithm's type: it
// reads the facts (a test walks the module's sources). Adding an algorithm
// touches this table, its .lua file, its value type in package algorithms
// and its Go model.
package algo

import (
	"fmt"
	"reflect"
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
	// Facts are what holds of every value of the algorithm.
	Facts Facts
	// keyed are the indices of the parameters the stored state depends on
	// (the window the windows' starts are aligned to and the log trims by,
	// a concurrency limit's TTL): keys carry their values, so that state
	// kept under one value is never read, trimmed or given back under
	// another. The state of a bucket or GCRA records the parameters it was
	// written under instead, and a queue's is a time: every plan of theirs
	// shares one key (Facts.SharedKey).
	keyed []int
	// typ is the algorithm's type.
	typ reflect.Type
	// read reads a's parameters; ok is false when a is another algorithm.
	read func(a algorithms.Algorithm) (v value, ok bool)
}

// value is what a row reads of an algorithm value.
type value struct {
	// params are its three integer parameters, as the scripts take them.
	params [3]int64
	// refill is its Refill (the buckets and GCRA).
	refill Refill
	// clientWindow is Desc.ClientWindow.
	clientWindow bool
}

// row builds a table row whose parameters come from a T. Its facts share
// a key when keyed is empty.
func row[T algorithms.Algorithm](code, file string, helpers []string, keyed []int, facts Facts, read func(T) value) Row {
	facts.SharedKey = len(keyed) == 0
	return Row{Code: code, File: file, Helpers: helpers, Facts: facts, keyed: keyed, typ: reflect.TypeFor[T](), read: func(a algorithms.Algorithm) (value, bool) {
		t, ok := a.(T)
		if !ok {
			return value{}, false
		}
		return read(t), true
	}}
}

func us(d time.Duration) int64 { return d.Microseconds() }

// epochMark ends the keys of the algorithms whose state carries an epoch
// (Facts.Epochs): "gce", not "gc". The release before the epochs reads a
// GCRA's or a queue's string with one as no state at all, and fails on a
// bucket's, so the two releases never share such a key: while both run,
// each counts on its own (see "Upgrading" in docs/guide.md).
const epochMark = "e"

// window is the keyed parameter of the rows that have one: the second (a
// window or a TTL).
var window = []int{1}

// The helper files of the buckets.
var bucketHelpers = []string{"state.lua", "verdict.lua", "ledger.lua", "meter.lua"}

// The facts of the buckets and GCRA.
var refilling = Facts{Leasable: true, Units: true, Epochs: true}

// Table lists the algorithms; a script's Mask has bit i for Table[i].
// Helper files are concatenated in the order they first appear here.
var Table = []Row{
	row("fw", "fixed_window.lua", []string{"state.lua"}, window, Facts{Leasable: true, WindowBound: true, Units: true}, func(a algorithms.FixedWindow) value {
		anchored := int64(0)
		if a.Anchored {
			anchored = 1
		}
		return value{params: [3]int64{int64(a.Limit), us(a.Window), anchored}, clientWindow: a.Anchored}
	}),
	row("sl", "sliding_log.lua", nil, window, Facts{Units: true}, func(a algorithms.SlidingLog) value {
		return value{params: [3]int64{int64(a.Limit), us(a.Window), 0}}
	}),
	row("sw", "sliding_window.lua", []string{"state.lua"}, window, Facts{Leasable: true, WindowBound: true, Weighted: true, Units: true}, func(a algorithms.SlidingWindow) value {
		return value{params: [3]int64{int64(a.Limit), us(a.Window), 0}}
	}),
	row("tb", "token_bucket.lua", bucketHelpers, nil, refilling, func(a algorithms.TokenBucket) value {
		return value{params: [3]int64{int64(a.Capacity), int64(a.Rate), us(a.Period)}, refill: Refill{Size: a.Capacity, Rate: a.Rate, Period: a.Period}}
	}),
	row("lb", "leaky_bucket.lua", bucketHelpers, nil, refilling, func(a algorithms.LeakyBucket) value {
		return value{params: [3]int64{int64(a.Capacity), int64(a.Rate), us(a.Period)}, refill: Refill{Size: a.Capacity, Rate: a.Rate, Period: a.Period}}
	}),
	row("gc", "gcra.lua", []string{"verdict.lua", "ledger.lua"}, nil, refilling, func(a algorithms.GCRA) value {
		return value{params: [3]int64{int64(a.Rate), us(a.Period), int64(a.Burst)}, refill: Refill{Size: a.Burst, Rate: a.Rate, Period: a.Period}}
	}),
	row("qu", "queue.lua", []string{"ledger.lua"}, nil, Facts{Delays: true, Epochs: true}, func(a algorithms.Queue) value {
		return value{params: [3]int64{int64(a.Rate), us(a.Period), us(a.MaxDelay)}}
	}),
	// A concurrency limit runs the sliding log's code under its own key.
	row("cc", "sliding_log.lua", nil, window, Facts{InFlight: true, Units: true}, func(a algorithms.Concurrency) value {
		return value{params: [3]int64{int64(a.Limit), us(a.TTL), 0}}
	}),
}

// Desc is a valid algorithm as keys and scripts name it.
type Desc struct {
	// Index is the algorithm's row in Table.
	Index int
	// KeySuffix ends the keys of the algorithm's state: the code, then the
	// parameters its stored state depends on (the window of the windows and
	// the log, in µs: "sw60000000"; the TTL of a concurrency limit), so
	// that a limit whose window changes starts afresh instead of
	// misreading, trimming or giving back into its state. The buckets, GCRA
	// and a queue have the code and epochMark ("tbe").
	KeySuffix string
	// Params identifies the algorithm and its parameters ("gc:5:1000000:10":
	// the code and the three integer parameters). It is the rule's
	// argument to the scripts.
	Params string
	// Facts are its row's.
	Facts Facts
	// Refill is how its units come back, for the buckets and GCRA.
	Refill Refill
	// ClientWindow: its windows start at each client's first request (an
	// anchored fixed window), so when one ends differs by client.
	ClientWindow bool
	// Hold is how long a unit is held at most before it expires, for an
	// algorithm whose units are held in flight (Facts.InFlight: a
	// concurrency limit's TTL); 0 for the others.
	Hold time.Duration
}

// Describe validates alg and describes it. An algorithm is a value: a
// pointer to one (nil or not) is refused before any of its methods runs.
func Describe(alg algorithms.Algorithm) (Desc, error) {
	if alg == nil {
		return Desc{}, fmt.Errorf("%w: no algorithm", algorithms.ErrInvalid)
	}
	for i, r := range Table {
		v, ok := r.read(alg)
		if !ok {
			continue
		}
		if err := alg.Validate(); err != nil {
			return Desc{}, err
		}
		p := v.params
		args := [3]string{strconv.FormatInt(p[0], 10), strconv.FormatInt(p[1], 10), strconv.FormatInt(p[2], 10)}
		suffix := r.Code
		for j, k := range r.keyed {
			if j > 0 {
				suffix += "-"
			}
			suffix += args[k]
		}
		if r.Facts.Epochs {
			suffix += epochMark
		}
		d := Desc{Index: i, KeySuffix: suffix, Params: r.Code + ":" + args[0] + ":" + args[1] + ":" + args[2], Facts: r.Facts, Refill: v.refill, ClientWindow: v.clientWindow}
		if r.Facts.InFlight {
			d.Hold = time.Duration(p[1]) * time.Microsecond // the TTL, the keyed parameter
		}
		return d, nil
	}
	return Desc{}, fmt.Errorf("%w: %T is a pointer: pass the algorithm by value", algorithms.ErrInvalid, alg)
}
