package lease

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// A leased rule's refusal made here, without asking the store, reports a
// wait no shorter than the store's: a client that obeys it is not sent
// back to be refused again.

// denied is the result of a check of cost refused here, without asking
// the store: its pool holds too little and its next take is not due. Its
// RetryAfter runs until that take, and no less than the store's wait (see
// storeWait); ok is false when the pool cannot bound the store's wait,
// and the check then goes to the store. p.mu is held.
func (p *pool[C]) denied(a *Algo, cost int, now time.Time) (r algorithms.Result, ok bool) {
	store, ok := p.storeWait(a, cost, now)
	if !ok {
		return r, false
	}
	r = p.aged(now)
	wait := max(exact.CeilMillis(p.next.Sub(now).Microseconds()), store)
	r.Allowed, r.Remaining, r.RetryAfter = false, 0, wait
	if wait != algorithms.Never {
		r.NextAfter = max(r.NextAfter, wait)
	}
	return r, true
}

// storeWait bounds the store's wait for a request of cost, less the time
// since the pool's last take, rounded up: the wait from the state that
// take saw (p.seen) once the units it had left are gone too, since other
// instances may have taken them. Never past the rule's quota. For a bucket
// or GCRA (a Refill), one more unit (NextAfter) and the refill of the
// rest. A sliding window's wait (Facts.Weighted) depends on counts the
// result does not tell: with nothing left, one unit is NextAfter, and a
// refused take's RetryAfter covers a cost no larger than its own; ok is
// false for the rest. For a fixed window (the other WindowBound), its end
// (NextAfter: every unit comes back then). It is false too when the state
// seen had no quota in use (NextAfter 0), which says nothing of what other
// instances took since. p.mu is held.
func (p *pool[C]) storeWait(a *Algo, cost int, now time.Time) (wait time.Duration, ok bool) {
	r := p.seen
	switch {
	case cost > a.Quota:
		return algorithms.Never, true
	case r.NextAfter == 0:
		return 0, false
	}
	switch f := a.Facts; {
	case a.Refill.Rate > 0:
		wait = r.NextAfter + a.Refill.Time(cost-1)
	case f.Weighted:
		switch {
		case r.Remaining > 0:
			return 0, false
		case cost == 1 && r.Allowed:
			wait = r.NextAfter
		case !r.Allowed && cost <= p.seenFor && r.RetryAfter != algorithms.Never:
			wait = r.RetryAfter
		default:
			return 0, false
		}
	case f.WindowBound:
		wait = r.NextAfter
	}
	return exact.CeilMillis(max(0, wait-now.Sub(p.seenAt)).Microseconds()), true
}
