package algorithms

import (
	"fmt"
	"time"
)

// GCRA is the generic cell rate algorithm: it stores one value per key, the
// theoretical arrival time (TAT), with the Rate and Period it was written
// under, so that another plan of the rule reads its debt in units (see
// Plans in package limiter). Requests are spaced T = Period/Rate apart,
// with a tolerance of Burst*T, so a new key admits Burst requests at once and
// then one every T.
//
// A request of cost c is allowed iff
//
//	max(tat, now) + c*T - now <= Burst*T
//
// and then sets tat = max(tat, now) + c*T. The TAT is kept in whole
// microseconds, rounded up, so when T is not a whole number of microseconds
// the limiter is stricter by less than 1 µs per admitted request.
//
// Remaining is floor((Burst*T - (tat - now)) / T). ResetAfter is tat - now.
// Redis memory: one string per key, the smallest of the six.
type GCRA struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// Validate reports a non-positive Rate or Burst, a Period under 1 ms, or
// a Burst*Period too large for exact arithmetic.
func (a GCRA) Validate() error { return validateBucket("GCRA", "Burst", a.Burst, a.Rate, a.Period) }

// String returns e.g. "GCRA(5 per 1s, burst 10)".
func (a GCRA) String() string {
	return fmt.Sprintf("GCRA(%d per %v, burst %d)", a.Rate, a.Period, a.Burst)
}

// policy is Burst per the time a drained allowance takes to recover.
func (a GCRA) policy() Policy { return refillPolicy(a.Burst, a.Rate, a.Period) }
