package model

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Take decides a request of cost at now against s as Step does and, when
// the request is allowed and extra is positive, takes a lease with it: up
// to extra more units, but no more than half of what remains beyond cost,
// so that near exhaustion a lease shrinks to nothing and what is left
// stays for other takers. It returns the outcome of the units taken
// (cost plus the lease) and the lease's size. The leasable algorithms are
// those whose units are fungible (internal/algo's Facts.Leasable). slot
// is the decision's slot id, as StepSlot takes it.
func Take(alg algorithms.Algorithm, s State, now time.Time, cost, extra int, slot int64) (Outcome, int) {
	o := StepSlot(alg, s, now, cost, slot)
	if o.Status != Allowed || cost == 0 || extra <= 0 {
		return o, 0
	}
	more := min(extra, (o.Held.Remaining-cost)/2)
	if more <= 0 {
		return o, 0
	}
	return StepSlot(alg, s, now, cost+more, slot), more
}
