package lease

import (
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// pool is one leased rule's units for one identity key.
type pool[C any] struct {
	mu      sync.Mutex
	current *Lease[C]         // the lease spent from, or nil
	spare   *Lease[C]         // taken ahead (see ahead), spent from next
	next    time.Time         // no take before it (paced, see Stack.Taken)
	seen    algorithms.Result // the rule's result at the last take
	seenAt  time.Time
	seenFor int       // the cost of that take's request
	demand  int       // units asked since since
	since   time.Time // start of the demand count
	rate    float64   // units asked per second, smoothed
	used    time.Time // last asked
	// taking is closed when the take in flight for the pool is over (nil:
	// none): requests that find the pool empty meanwhile wait for it
	// rather than take too.
	taking chan struct{}
	// takes counts the takes in flight for the pool, the one taking
	// marks and any other: a pool with one is not idle, or the lease it
	// brings would land in a pool the pools no longer keep, neither spent
	// nor refunded.
	takes int
	// forgotten is set by a Reset of the pool's key (Pools.Forget): a take
	// in flight then brings a lease that is void (see Stack.Taken), and a
	// request that waited for it goes to the store unleased.
	forgotten bool
}

// Lease is a batch of units a decision took from the store.
type Lease[C any] struct {
	pool     *pool[C] // the pool it was taken for
	check    C        // as decided, for its refund
	size     int      // every unit it took: the request's cost and its lease
	token    store.Token
	at       time.Time // the decision's instant
	fallback bool      // taken from the fallback store
	expires  time.Time // local time its units may be spent until
	free     int       // unspent and not reserved
	reserved int       // reserved by decisions in flight
	ended    bool      // spent from no more; what is free is refunded once reserved is 0
	refunded bool      // refunded: the store's refund of its token is used
}

// reserve takes n units of the pool's current lease for a decision, if it
// has them unexpired, else of its spare; a lease expired, or with too few
// units left for n, ends (its refund is appended to out).
func (p *pool[C]) reserve(n int, now time.Time, out []Refund[C]) (*Lease[C], []Refund[C]) {
	for {
		l := p.current
		if l == nil {
			if p.spare == nil {
				return nil, out
			}
			p.current, p.spare = p.spare, nil
			continue
		}
		if !now.Before(l.expires) || l.free < n {
			out = p.end(l, out)
			continue
		}
		l.free -= n
		l.reserved += n
		return l, out
	}
}

// aheadMin is the smallest lease whose successor is taken ahead (see
// ahead): a smaller one is spent to its last unit first.
const aheadMin = 8

// ahead reports whether a decision of cost n takes the pool's next lease
// now, rather than spend from the current one: it is live, it would be
// left with less than a quarter of what it took, and no take is held,
// in flight or paced. The lease taken is the pool's spare: requests go on
// spending the current one meanwhile, so none waits for the take, and
// then the spare. p.mu is held.
func (p *pool[C]) ahead(n int, now time.Time) bool {
	l := p.current
	return l != nil && p.spare == nil && p.taking == nil && !now.Before(p.next) && now.Before(l.expires) &&
		l.size >= aheadMin && (l.free-n)*4 < l.size
}

// empty reports whether the pool holds no lease. p.mu is held.
func (p *pool[C]) empty() bool { return p.current == nil && p.spare == nil }

// both is the pool's current and spare leases, either nil. p.mu is held.
func (p *pool[C]) both() [2]*Lease[C] { return [2]*Lease[C]{p.current, p.spare} }

// held is the units the pool's leases hold free. p.mu is held.
func (p *pool[C]) held() int {
	n := 0
	for _, l := range p.both() {
		if l != nil {
			n += l.free
		}
	}
	return n
}

// took ends a take in flight for the pool; marks is whether it is the
// pool's marked take (taking), whose end lets the requests waiting for it
// go on.
func (p *pool[C]) took(marks bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.takes--
	if marks && p.taking != nil {
		close(p.taking)
		p.taking = nil
	}
}

// idle reports whether the pools may forget p, asked last at p.used:
// it holds no lease, no take is in flight for it, and it was not asked
// for ttl at now. p.mu is held.
func (p *pool[C]) idle(now time.Time, ttl time.Duration) bool {
	return p.empty() && p.takes == 0 && now.Sub(p.used) >= ttl
}

// end ends l: it is spent from no more, and what it holds free is
// refunded now (appended to out), or once the decisions that reserved
// some of it are over. p.mu is held.
func (p *pool[C]) end(l *Lease[C], out []Refund[C]) []Refund[C] {
	switch l {
	case p.current:
		p.current = nil
	case p.spare:
		p.spare = nil
	}
	l.ended = true
	return l.refundFree(out)
}

// refundFree appends l's refund to out, once l has ended and nothing is
// reserved from it: its free units, once (refundFree leaves none free).
func (l *Lease[C]) refundFree(out []Refund[C]) []Refund[C] {
	if !l.ended || l.reserved > 0 || l.free == 0 || l.refunded {
		return out
	}
	l.refunded = true
	out = append(out, Refund[C]{Check: l.check, Back: l.free, Token: l.token, At: l.at, Fallback: l.fallback})
	l.free = 0
	return out
}

// resolve ends a reservation of n units from l: spent, or restored to l's
// free units when the decision was denied or failed. r is the check's
// result, served from l: the rule's result at the last take, aged, with
// the units the pool holds added to what remains.
func (p *pool[C]) resolve(l *Lease[C], n int, spent bool, now time.Time, out []Refund[C]) (algorithms.Result, []Refund[C]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l.reserved -= n
	if !spent {
		l.free += n
	}
	out = l.refundFree(out)
	r := p.aged(now)
	r.Allowed, r.Remaining = true, r.Remaining+p.held()
	return r, out
}

// Restore puts back n units a decision spent from l (Settle below the
// cost): they are free again in l if its pool still holds it, else they
// are refunded to the store with l's refund, appended to out, unless that
// was done (they are then lost: stricter, never looser).
func (l *Lease[C]) Restore(n int, out []Refund[C]) []Refund[C] {
	p := l.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.refunded {
		return out
	}
	l.free += n
	if p.current != l && p.spare != l {
		l.ended = true
	}
	return l.refundFree(out)
}

// size is how many units a take asks for beyond its cost: the pool's
// recent demand over one interval, at least 1 and at most quota.
func (p *pool[C]) size(now time.Time, iv time.Duration, quota int) int {
	if el := max(now.Sub(p.since), iv/4); el > 0 {
		sample := float64(p.demand) / el.Seconds()
		if p.rate == 0 {
			p.rate = sample
		} else {
			p.rate = (p.rate + sample) / 2
		}
		p.demand, p.since = 0, now
	}
	return int(min(float64(quota), max(1, p.rate*iv.Seconds()+0.5)))
}

// install puts a lease just taken in the pool: as its spare while the
// current one is live with units left (a take ahead), else as the current
// one. The lease it displaces (a concurrent take's) ends. p.mu is held.
func (p *pool[C]) install(l *Lease[C], now time.Time, out []Refund[C]) []Refund[C] {
	place := &p.current
	if c := p.current; c != nil && now.Before(c.expires) && c.free > 0 {
		place = &p.spare
	}
	if *place != nil {
		out = p.end(*place, out)
	}
	*place = l
	return out
}

// aged is the last result seen, its durations less the time since. p.mu
// is held.
func (p *pool[C]) aged(now time.Time) algorithms.Result {
	r, since := p.seen, now.Sub(p.seenAt)
	r.RetryAfter, r.Delay = 0, 0
	r.ResetAfter = max(0, r.ResetAfter-since)
	r.NextAfter = max(0, r.NextAfter-since)
	return r
}
