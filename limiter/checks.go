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
	return scratch{checks: a.checks[:n:n], results: a.results[:n:n], arrays: a}
}

// recycle clears what the decision used of the arrays (they hold keys
// and algorithms; a decision writes no further than its slices' length)
// and returns them to the pool.
func (s scratch) recycle() {
	if s.arrays != nil {
		clear(s.checks)
		clear(s.results)
		scratchPool.Put(s.arrays)
	}
}

// resultsChunk is rule results allocated together and handed out a few at
// a time, each slot once: a decision's Results is a part of a chunk, so
// that deciding allocates once per chunkResults rules decided rather than
// once per decision. A chunk lives as long as any of its decisions does.
type resultsChunk struct {
	results [chunkResults]RuleResult
	used    int
}

const chunkResults = 32

var resultsChunks = sync.Pool{New: func() any { return new(resultsChunk) }}

// newResults returns n zero rule results no other decision holds.
func newResults(n int) []RuleResult {
	if n > chunkResults/4 {
		return make([]RuleResult, n)
	}
	c := resultsChunks.Get().(*resultsChunk)
	if c.used+n > chunkResults {
		c = new(resultsChunk)
	}
	r := c.results[c.used : c.used+n : c.used+n]
	c.used += n
	resultsChunks.Put(c)
	return r
}
