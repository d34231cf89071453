package limiter

import (
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Quota leases (see "Leases" in the package doc): a leased rule's units
// are taken from the store in batches, one batch per pool (a rule and
// identity), and spent here.

// maxPools bounds the pools a Limiter keeps; checks of further identities
// are decided unleased until pools go idle.
const maxPools = 10_000

// maxLease is the longest lease a rule may set.
const maxLease = time.Minute

// leases is a Limiter's lease pools.
type leases struct {
	mu     sync.RWMutex
	pools  map[string]*pool
	closed bool
	stop   chan struct{} // ends the sweeper, when there is one
	swept  sync.WaitGroup
}

// pool is one leased rule's units for one identity key.
type pool struct {
	mu      sync.Mutex
	current *lease            // the lease spent from, or nil
	spare   *lease            // taken ahead (see ahead), spent from next
	next    time.Time         // no take before it (paced, see take)
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
}

// lease is a batch of units a decision took from the store.
type lease struct {
	check    StoreCheck // as decided: Cost is every unit it took
	algo     *algo      // the check's algorithm
	token    Token
	at       time.Time // the decision's instant
	fallback bool      // taken from the fallback store
	expires  time.Time // local time its units may be spent until
	free     int       // unspent and not reserved
	reserved int       // reserved by decisions in flight
	ended    bool      // spent from no more; what is free is refunded once reserved is 0
	refunded bool      // refunded: the store's refund of its token is used
}

// refund is what a lease gives back to the store that leased it when it
// ends: its free units.
type refund struct {
	StoreRefund
	at       time.Time // the lease's decision's instant
	fallback bool      // leased from the fallback store
}

// spend is a leased check's part in a decision: units reserved from a
// lease, or a take sent to the store.
type spend struct {
	pool  *pool
	lease *lease // reserved from, or nil for a take
	n     int
	take  bool
	marks bool // the take is the pool's take in flight (pool.taking)
}

// leaseable is the error for a rule, of the validated algorithm a, that
// cannot be leased, or "".
func leaseable(r Rule, a *algo) string {
	switch {
	case r.Lease < 0 || r.Lease > maxLease:
		return "lease " + r.Lease.String() + " outside 0 to " + maxLease.String()
	case r.Lease == 0:
		return ""
	case r.Blockable || r.Penalty > 0:
		return "a leased rule cannot take blocks (its units are spent without asking the store)"
	}
	if a.facts.Leasable {
		return ""
	}
	return "a " + r.Algorithm.String() + " cannot be leased: its units are not interchangeable"
}

// interval is how long a pool of a rule of algorithm a leasing for ttl
// goes between takes when its takes come up short: a tenth of the lease,
// and no more than refills half a bucket's (or GCRA's burst) capacity or
// a tenth of a window, so that nothing refilled meanwhile overflows.
func interval(a *algo, ttl time.Duration) time.Duration {
	iv := ttl / 10
	if a.refill.Rate > 0 {
		iv = min(iv, a.refill.Half())
	} else {
		iv = min(iv, a.policy.Window/10)
	}
	return max(iv, time.Millisecond)
}

// pool returns key's pool, or nil when the pools are closed or full.
func (ls *leases) pool(key string, now time.Time, ttl time.Duration) *pool {
	ls.mu.RLock()
	p, closed := ls.pools[key], ls.closed
	ls.mu.RUnlock()
	if closed {
		return nil
	}
	if p != nil {
		return p
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return nil
	}
	if p := ls.pools[key]; p != nil {
		return p
	}
	if len(ls.pools) >= maxPools {
		ls.dropIdle(now, ttl)
		if len(ls.pools) >= maxPools {
			return nil
		}
	}
	p = &pool{since: now, used: now}
	ls.pools[key] = p
	return p
}

// dropIdle forgets the pools that hold no lease and were not asked for
// ttl. ls.mu is held.
func (ls *leases) dropIdle(now time.Time, ttl time.Duration) {
	for key, p := range ls.pools {
		p.mu.Lock()
		idle := p.empty() && now.Sub(p.used) >= ttl
		p.mu.Unlock()
		if idle {
			delete(ls.pools, key)
		}
	}
}

// reserve takes n units of the pool's current lease for a decision, if it
// has them unexpired, else of its spare; a lease expired, or with too few
// units left for n, ends (its refund is appended to out).
func (p *pool) reserve(n int, now time.Time, out []*refund) (*lease, []*refund) {
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
			if g := p.end(l); g != nil {
				out = append(out, g)
			}
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
func (p *pool) ahead(n int, now time.Time) bool {
	l := p.current
	return l != nil && p.spare == nil && p.taking == nil && !now.Before(p.next) && now.Before(l.expires) &&
		l.check.Cost >= aheadMin && (l.free-n)*4 < l.check.Cost
}

// empty reports whether the pool holds no lease. p.mu is held.
func (p *pool) empty() bool { return p.current == nil && p.spare == nil }

// both is the pool's current and spare leases, either nil. p.mu is held.
func (p *pool) both() [2]*lease { return [2]*lease{p.current, p.spare} }

// held is the units the pool's leases hold free. p.mu is held.
func (p *pool) held() int {
	n := 0
	for _, l := range p.both() {
		if l != nil {
			n += l.free
		}
	}
	return n
}

// took ends the pool's take in flight: the requests waiting for it go
// on.
func (p *pool) took() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.taking != nil {
		close(p.taking)
		p.taking = nil
	}
}

// end ends l: it is spent from no more, and what it holds free is
// refunded now, or once the decisions that reserved some of it are over.
// p.mu is held.
func (p *pool) end(l *lease) *refund {
	switch l {
	case p.current:
		p.current = nil
	case p.spare:
		p.spare = nil
	}
	l.ended = true
	return l.refundFree()
}

// refundFree is l's refund, once l has ended and nothing is reserved
// from it: its free units, once (refundFree leaves none free).
func (l *lease) refundFree() *refund {
	if !l.ended || l.reserved > 0 || l.free == 0 || l.refunded {
		return nil
	}
	l.refunded = true
	c := l.check
	resets, ttl := resetMark(c.Key, l.algo)
	rf := &refund{at: l.at, fallback: l.fallback, StoreRefund: StoreRefund{Check: c, Back: l.free, Token: l.token, Resets: resets, MarkTTL: ttl}}
	l.free = 0
	return rf
}

// resolve ends a reservation of n units from l: spent, or restored to l's
// free units when the decision was denied or failed. r is the check's
// result, served from l: the rule's result at the last take, aged, with
// the units the pool holds added to what remains.
func (p *pool) resolve(l *lease, n int, spent bool, now time.Time) (r algorithms.Result, out *refund) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l.reserved -= n
	if !spent {
		l.free += n
	}
	out = l.refundFree()
	r = p.aged(now)
	r.Allowed, r.Remaining = true, r.Remaining+p.held()
	return r, out
}

// restore puts back n units a decision spent from l (Settle below the
// cost):
// they are free again in l if the pool still holds it, else they are
// refunded to the store with l's refund, unless that was done (they are
// then lost: stricter, never looser).
func (p *pool) restore(l *lease, n int) *refund {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.refunded {
		return nil
	}
	l.free += n
	if p.current != l && p.spare != l {
		l.ended = true
	}
	return l.refundFree()
}

// size is how many units a take asks for beyond its cost: the pool's
// recent demand over one interval, at least 1 and at most quota.
func (p *pool) size(now time.Time, iv time.Duration, quota int) int {
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

// taken records the outcome of rule r's take c, sent to the store at
// local time now: on an allowed decision, the lease it took (see install),
// and what the pool holds in res's Remaining; when the rule denied, or
// its take came up short (the store had less than asked), no take before
// an interval has passed, or the rule's wait if longer.
func (p *pool) taken(d Decision, res *RuleResult, c StoreCheck, r checked, asked int, now time.Time) (l *lease, out *refund) {
	iv := r.rule.leaseInterval
	p.mu.Lock()
	defer p.mu.Unlock()
	if !res.Allowed {
		if res.RetryAfter != algorithms.Never {
			p.next = now.Add(max(iv, res.RetryAfter))
		}
		p.seen, p.seenAt, p.seenFor = res.Result, now, c.Cost
		return nil, nil
	}
	if !d.Allowed {
		return nil, nil // another rule denied: nothing was taken
	}
	p.seen, p.seenAt, p.seenFor = res.Result, now, c.Cost
	if res.Leased < asked {
		p.next = now.Add(iv)
	}
	c.Cost += res.Leased
	l = &lease{check: c, token: res.Token, at: d.At, fallback: d.Fallback, algo: r.algo, expires: now.Add(expiry(r.algo, res.Token, d.At, r.rule.lease)),
		free: res.Leased}
	if l.free > 0 {
		out = p.install(l, now)
	}
	res.Remaining += p.held()
	return l, out
}

// install puts a lease just taken in the pool: as its spare while the
// current one is live with units left (a take ahead), else as the current
// one. The lease it displaces (a concurrent take's) ends. p.mu is held.
func (p *pool) install(l *lease, now time.Time) *refund {
	place := &p.current
	if c := p.current; c != nil && now.Before(c.expires) && c.free > 0 {
		place = &p.spare
	}
	var out *refund
	if *place != nil {
		out = p.end(*place)
	}
	*place = l
	return out
}

// expiry is how long a lease of algorithm a taken at the instant at
// lasts: ttl, and for the windows (Facts.WindowBound) no further than the
// end of the window its units were counted in (the token's mark is its
// start), so that they are spent in that window.
func expiry(a *algo, tok Token, at time.Time, ttl time.Duration) time.Duration {
	if !a.facts.WindowBound {
		return ttl
	}
	end := tok.Mark + a.policy.Window.Microseconds()
	return min(ttl, time.Duration(end-at.UnixMicro())*time.Microsecond)
}

// aged is the last result seen, its durations less the time since. p.mu
// is held.
func (p *pool) aged(now time.Time) algorithms.Result {
	r, since := p.seen, now.Sub(p.seenAt)
	r.RetryAfter, r.Delay = 0, 0
	r.ResetAfter = max(0, r.ResetAfter-since)
	r.NextAfter = max(0, r.NextAfter-since)
	return r
}

// sweep starts the goroutine that ends expired leases nothing asks for
// any more, refunds their units and forgets idle pools, until Close.
func (l *Limiter) sweep() {
	every := time.Duration(maxLease)
	for _, r := range l.rules {
		if r.lease > 0 {
			every = min(every, max(time.Millisecond, r.lease/4))
		}
	}
	ls := l.leases
	ls.stop = make(chan struct{})
	ls.swept.Add(1)
	go func() {
		defer ls.swept.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ls.stop:
				return
			case <-t.C:
				l.refundLeases(ls.expired(time.Now(), false))
			}
		}
	}()
}

// expired ends the leases expired at now (all of them when all is set),
// returns their refunds, and forgets pools idle for a minute.
func (ls *leases) expired(now time.Time, all bool) []*refund {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*refund
	for key, p := range ls.pools {
		p.mu.Lock()
		for _, l := range p.both() {
			if l != nil && (all || !now.Before(l.expires)) {
				if g := p.end(l); g != nil {
					out = append(out, g)
				}
			}
		}
		if p.empty() && now.Sub(p.used) >= maxLease {
			delete(ls.pools, key)
		}
		p.mu.Unlock()
	}
	return out
}

// isClosed reports whether Close has run.
func (ls *leases) isClosed() bool {
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	return ls.closed
}

// forget drops key's pool (Reset): its lease's units are not refunded,
// since a Reset voids refunds of what was decided before it.
func (ls *leases) forget(key string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if p := ls.pools[key]; p != nil {
		p.mu.Lock()
		for _, l := range p.both() {
			if l != nil {
				l.ended, l.refunded = true, true
			}
		}
		p.current, p.spare = nil, nil
		p.mu.Unlock()
		delete(ls.pools, key)
	}
}

// Close refunds the units of every lease (see Rule.Lease) to the store and
// stops leasing, and the sweeper: later decisions of leased rules ask the
// store each time. A Limiter without leased rules has nothing to close. It
// returns the store's error when a refund failed. Such a refund is not
// sent again, and its outcome is unknown: one that timed out may still
// have been applied (Redis runs a script it received even after the
// caller stopped waiting); units not refunded stay consumed until the
// rule's state recovers them. Close is safe to call more than once.
func (l *Limiter) Close() error {
	ls := l.leases
	if ls == nil {
		return nil
	}
	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		return nil
	}
	ls.closed = true
	ls.mu.Unlock()
	if ls.stop != nil {
		close(ls.stop)
		ls.swept.Wait()
	}
	return l.refundLeases(ls.expired(l.local(), true))
}
