package limiter

import (
	"slices"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/denycache"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// The deny cache (see WithDenyCache) remembers the results of stacks that
// the store denied, until the earliest time they could be admitted but for
// at most its maximum age, so repeated requests of a denied client are
// denied without a round trip.
//
// While Redis keeps the client's state, it never turns an allow into a
// deny that Redis would not have made: the cached time is the denial's
// RetryAfter minus 1 ms (RetryAfter is rounded up), counted from before
// the request was sent, and other requests can only consume more in the
// meantime. (Two exceptions: on Redis Cluster a stack spanning slots may be
// denied while another request's consumption awaits its refund, and its
// cached wait then includes that consumption; and an admission under
// another plan of a bucket or GCRA with a faster rate makes its state
// drain at that rate, sooner than the cached wait counted on.) When Redis
// forgets the client sooner (an operator's reset, an eviction, a restart
// without persistence, a clock step), the cache goes on denying for at
// most its maximum age. It never turns a deny into an allow: a miss asks
// Redis. Waits are counted on the local clock (or the WithClock one),
// which must advance with the Redis server's. Stacks with a rule whose
// units are held in flight (a concurrency limit's slots come back when
// requests end, long before the wait it reports) and stacks with a cost of
// 0 are not cached.

// cachedDenial writes the cached denial of checks at now in d, Cached set,
// if there is one, and returns the ticket to cache the store's answer
// with. Its waits are shortened by the time since; the rules that allowed
// it, and shadow rules, are Undecided.
func (l *Limiter) cachedDenial(checks []store.Check, rules []checked, now time.Time, d *Decision) denycache.Ticket {
	if now.IsZero() {
		now = time.Now()
	}
	t, cached, at, ok := l.denied.Lookup(checks, func(i int) bool { return rules[i].algo.facts.InFlight }, now)
	if !ok {
		return t
	}
	elapsed := now.Sub(at)
	results := make([]RuleResult, len(cached))
	for i, r := range cached {
		if r.Shadow { // its would-be refusal is not this request's
			r.Allowed, r.RetryAfter = true, 0
		}
		r.Undecided = r.Allowed // asked nothing this time
		r.RetryAfter = shorten(r.RetryAfter, elapsed)
		r.ResetAfter = shorten(r.ResetAfter, elapsed)
		r.NextAfter = shorten(r.NextAfter, elapsed)
		results[i] = r
	}
	*d = Decision{At: now, Results: results, Cached: true}
	return t
}

// cacheDenial remembers d, the store's denial of t's stack, checks.
func (l *Limiter) cacheDenial(t denycache.Ticket, checks []store.Check, d Decision) {
	if wait := d.RetryAfter(); wait != algorithms.Never {
		// A copy: the caller owns d.Results and may change it.
		l.denied.Put(t, checks, wait, slices.Clone(d.Results))
	}
}

// shorten subtracts elapsed from a wait, rounding up to the millisecond;
// algorithms.Never stays.
func shorten(wait, elapsed time.Duration) time.Duration {
	if wait <= 0 || wait == algorithms.Never {
		return wait
	}
	left := max(0, wait-elapsed)
	return (left + time.Millisecond - 1).Truncate(time.Millisecond)
}
