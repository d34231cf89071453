package limiter

import "sync"

// scratchChecks is the store checks of one Decide, from scratch (arrays a
// sync.Pool keeps for reuse): a Store keeps nothing of them once Decide
// has returned (see Store), and a Decision keeps copies, so one
// decision's array serves the next.
type scratchChecks struct {
	checks []StoreCheck
	array  *[scratchLen]StoreCheck // nil when the slice is the decision's own
}

// scratchLen is how many checks a scratch array holds; longer stacks
// allocate.
const scratchLen = 4

var checkScratch = sync.Pool{New: func() any { return new([scratchLen]StoreCheck) }}

// storeChecks returns n zero store checks.
func storeChecks(n int) scratchChecks {
	if n > scratchLen {
		return scratchChecks{checks: make([]StoreCheck, n)}
	}
	a := checkScratch.Get().(*[scratchLen]StoreCheck)
	return scratchChecks{checks: a[:n], array: a}
}

// recycle clears the checks (their keys are not kept alive by the
// scratch) and puts their array back for reuse.
func (s scratchChecks) recycle() {
	if s.array != nil {
		clear(s.checks)
		checkScratch.Put(s.array)
	}
}
