package limiter

import (
	"sync"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// scratch is the store checks of one Decide and the results the store
// writes for them, from arrays a sync.Pool keeps for reuse: a Store keeps
// neither once Decide has returned (see store.Store), and a Decision keeps
// copies, so one decision's arrays serve the next.
type scratch struct {
	checks  []store.Check
	results []store.Result
	arrays  *scratchArrays // nil when the slices are the decision's own
}

// scratchLen is how many checks a scratch array holds; longer stacks
// allocate.
const scratchLen = 4

type scratchArrays struct {
	checks  [scratchLen]store.Check
	results [scratchLen]store.Result
}

var scratchPool = sync.Pool{New: func() any { return new(scratchArrays) }}

// storeChecks returns n zero store checks and n zero results.
func storeChecks(n int) scratch {
	if n > scratchLen {
		return scratch{checks: make([]store.Check, n), results: make([]store.Result, n)}
	}
	a := scratchPool.Get().(*scratchArrays)
	return scratch{checks: a.checks[:n], results: a.results[:n], arrays: a}
}

// recycle clears the arrays (they hold keys and algorithms) and returns
// them to the pool.
func (s scratch) recycle() {
	if s.arrays != nil {
		*s.arrays = scratchArrays{}
		scratchPool.Put(s.arrays)
	}
}
