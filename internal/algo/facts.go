package algo

import (
	"reflect"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// Facts are what holds of every value of an algorithm, for the code that
// treats algorithms alike: the limiter, the stores and the middleware ask
// these fields rather than the algorithm's type.
type Facts struct {
	// Leasable: its units are fungible, so that units taken now may be
	// spent later (a quota lease): the windows, the buckets and GCRA. A
	// sliding log's entries, a queue's turns and a concurrency limit's
	// slots are not.
	Leasable bool
	// InFlight: its units are held while requests run and come back when
	// they end (a concurrency limit), long before the wait a denial
	// reports.
	InFlight bool
	// WindowBound: its units count in the window that begins at the
	// decision token's Mark and ends a policy Window later (the fixed and
	// sliding windows), so a lease's units are spent before that end.
	WindowBound bool
	// Weighted: the count in use weighs the previous window's by its
	// overlap (the sliding window), so how soon a cost fits depends on
	// counts a Result does not tell.
	Weighted bool
	// Units: a Result's Remaining counts units, so that units given back
	// add to it. A queue's counts its turns.
	Units bool
	// Delays: it admits a request by delaying it to its turn (a queue),
	// which a caller must wait for.
	Delays bool
	// Epochs: its state keeps a Ledger of give-backs (the buckets,
	// GCRA, a queue), and is named, when written fresh, by the id of the
	// decision that wrote it (store.Check.Slot), which its give-backs must
	// match (store.Token.Epoch).
	Epochs bool
	// SharedKey: every parameter set of the algorithm keeps its state under
	// one key, named by the code alone (and epochMark: the buckets, GCRA,
	// a queue); the others' keys carry the parameters their state depends
	// on.
	SharedKey bool
}

// Refill is how units in use come back to a bucket or GCRA: Rate units
// per Period, up to Size (the capacity, or GCRA's burst). The other
// algorithms have the zero Refill (Rate 0).
type Refill struct {
	Size, Rate int
	Period     time.Duration
}

// Half is how long refilling half of Size takes: Size periods over two
// rates, in floating point (a long period times a large size overflows a
// Duration), truncated to the nanosecond.
func (r Refill) Half() time.Duration {
	return time.Duration(float64(r.Period) * float64(r.Size) / float64(2*r.Rate))
}

// Time is how long refilling n units takes, rounded up to the
// millisecond.
func (r Refill) Time(n int) time.Duration {
	return exact.CeilMillis(exact.CeilDiv(int64(n)*r.Period.Microseconds(), int64(r.Rate)))
}

// FactsOf is the facts of alg's row; ok is false for a value no row
// holds (nil, or a pointer). It allocates nothing.
func FactsOf(alg algorithms.Algorithm) (f Facts, ok bool) {
	t := reflect.TypeOf(alg)
	for i := range Table {
		if Table[i].typ == t {
			return Table[i].Facts, true
		}
	}
	return Facts{}, false
}
