// Package scratch lends a Limiter's decisions the store checks they hand
// to a Store and the results the store writes for them, from arrays a
// sync.Pool keeps for reuse: a Store keeps neither once Decide has
// returned (see store.Store), and a Decision keeps copies, so one
// decision's arrays serve the next.
package scratch

import (
	"sync"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Stack is the store checks of one decision and their results.
type Stack struct {
	Checks  []store.Check
	Results []store.Result
	arrays  *arrays // nil when the slices are the decision's own
}

// stackLen is how many checks an array holds; longer stacks allocate.
const stackLen = 4

type arrays struct {
	checks  [stackLen]store.Check
	results [stackLen]store.Result
}

var pool = sync.Pool{New: func() any { return new(arrays) }}

// Get returns n zero store checks and n zero results.
func Get(n int) Stack {
	if n > stackLen {
		return Stack{Checks: make([]store.Check, n), Results: make([]store.Result, n)}
	}
	a := pool.Get().(*arrays)
	return Stack{Checks: a.checks[:n:n], Results: a.results[:n:n], arrays: a}
}

// Recycle clears what the decision used of the arrays (they hold keys
// and algorithms; a decision writes no further than its slices' length)
// and returns them to the pool.
func (s Stack) Recycle() {
	if s.arrays != nil {
		clear(s.Checks)
		clear(s.Results)
		pool.Put(s.arrays)
	}
}
