package limiter

import "sync"

// pooledChecks is the store checks of one Decide, from a pool: a Store
// keeps nothing of them once Decide has returned (see Store), and a
// Decision keeps copies, so one decision's slice serves the next.
type pooledChecks struct {
	checks []StoreCheck
	array  *[pooled]StoreCheck // nil when the slice is the decision's own
}

// pooled is how many checks a pooled slice holds; longer stacks allocate.
const pooled = 4

var checkArrays = sync.Pool{New: func() any { return new([pooled]StoreCheck) }}

// storeChecks returns n zero store checks.
func storeChecks(n int) pooledChecks {
	if n > pooled {
		return pooledChecks{checks: make([]StoreCheck, n)}
	}
	a := checkArrays.Get().(*[pooled]StoreCheck)
	return pooledChecks{checks: a[:n], array: a}
}

// free clears the checks (their keys are not kept alive by the pool) and
// returns them to the pool.
func (p pooledChecks) free() {
	if p.array != nil {
		clear(p.checks)
		checkArrays.Put(p.array)
	}
}
