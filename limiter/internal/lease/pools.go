// Package lease keeps a Limiter's quota leases (see "Leases" in the
// limiter's package doc): a leased rule's units are taken from the store
// in batches, one batch per pool (a rule and identity), and spent here.
// It decides nothing with a store: the limiter asks it, per check, whether
// a lease serves it (a Stack), sends the takes it sizes to the store with
// the rest of the stack, and hands back the store's results; every unit to
// give back comes out as a Refund value, which the limiter sends to the
// store that decided it. C is the limiter's record of a check as decided,
// carried to its refund untouched.
package lease

import (
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// maxPools bounds the pools kept; checks of further identities are
// decided unleased until pools go idle.
const maxPools = 10_000

// Pools is a Limiter's lease pools.
type Pools[C any] struct {
	mu     sync.RWMutex
	pools  map[store.Key]*pool[C]
	closed bool
	clock  func() time.Time // nil: the local clock
	every  time.Duration    // the sweeper's period
	stop   chan struct{}    // ends the sweeper, when there is one
	swept  sync.WaitGroup
}

// Refund is what a lease gives back to the store that leased it when it
// ends: Back of the units of the check decided (Check) at the instant At,
// with the store's Token for it, on the fallback store when Fallback.
type Refund[C any] struct {
	Check    C
	Back     int
	Token    store.Token
	At       time.Time
	Fallback bool
}

// New returns empty pools that run on clock (nil: the local clock; a
// lease's time to live is local).
func New[C any](clock func() time.Time) *Pools[C] {
	return &Pools[C]{pools: make(map[store.Key]*pool[C]), clock: clock, every: MaxLease}
}

// Rule is the leased rule of algorithm a leasing for ttl; the sweeper (see
// Start) runs at least every quarter of it.
func (ps *Pools[C]) Rule(ttl time.Duration, a *Algo) Rule {
	ps.every = min(ps.every, max(time.Millisecond, ttl/4))
	return Rule{Lease: ttl, Interval: interval(a, ttl)}
}

// now is the time the pools run on.
func (ps *Pools[C]) now() time.Time {
	if ps.clock != nil {
		return ps.clock()
	}
	return time.Now()
}

// pool returns key's pool, or nil when the pools are closed or full.
func (ps *Pools[C]) pool(key store.Key, now time.Time, ttl time.Duration) *pool[C] {
	ps.mu.RLock()
	p, closed := ps.pools[key], ps.closed
	ps.mu.RUnlock()
	if closed {
		return nil
	}
	if p != nil {
		return p
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil
	}
	if p := ps.pools[key]; p != nil {
		return p
	}
	if len(ps.pools) >= maxPools {
		ps.dropIdle(now, ttl)
		if len(ps.pools) >= maxPools {
			return nil
		}
	}
	p = &pool[C]{since: now, used: now}
	ps.pools[key] = p
	return p
}

// dropIdle forgets the pools that hold no lease, wait for no take and
// were not asked for ttl. ps.mu is held.
func (ps *Pools[C]) dropIdle(now time.Time, ttl time.Duration) {
	for key, p := range ps.pools {
		p.mu.Lock()
		idle := p.idle(now, ttl)
		p.mu.Unlock()
		if idle {
			delete(ps.pools, key)
		}
	}
}

// Start starts the goroutine that ends expired leases nothing asks for
// any more, hands their refunds to sink and forgets idle pools, until
// Close.
func (ps *Pools[C]) Start(sink func([]Refund[C])) {
	ps.stop = make(chan struct{})
	ps.swept.Add(1)
	go func() {
		defer ps.swept.Done()
		t := time.NewTicker(ps.every)
		defer t.Stop()
		for {
			select {
			case <-ps.stop:
				return
			case <-t.C:
				sink(ps.expired(ps.now(), false))
			}
		}
	}()
}

// expired ends the leases expired at now (all of them when all is set),
// returns their refunds, and forgets pools idle for MaxLease.
func (ps *Pools[C]) expired(now time.Time, all bool) []Refund[C] {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []Refund[C]
	for key, p := range ps.pools {
		p.mu.Lock()
		for _, l := range p.both() {
			if l != nil && (all || !now.Before(l.expires)) {
				out = p.end(l, out)
			}
		}
		if p.idle(now, MaxLease) {
			delete(ps.pools, key)
		}
		p.mu.Unlock()
	}
	return out
}

// isClosed reports whether Close has run.
func (ps *Pools[C]) isClosed() bool {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return ps.closed
}

// Forget drops the pools of keys (a Reset): their leases' units are not
// refunded, since a Reset voids refunds of what was decided before it,
// and the lease of a take in flight for them is void too (it may have
// taken its units before the Reset forgot them: spending them after it
// could admit more than the rule allows). Nil pools hold nothing.
func (ps *Pools[C]) Forget(keys ...store.Key) {
	if ps == nil {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, key := range keys {
		p := ps.pools[key]
		if p == nil {
			continue
		}
		p.mu.Lock()
		for _, l := range p.both() {
			if l != nil {
				l.ended, l.refunded = true, true
			}
		}
		p.current, p.spare, p.forgotten = nil, nil, true
		p.mu.Unlock()
		delete(ps.pools, key)
	}
}

// Close stops leasing and the sweeper, and returns the refunds of every
// lease; later checks are served by the store. A second Close, or nil
// pools, returns nothing.
func (ps *Pools[C]) Close() []Refund[C] {
	if ps == nil {
		return nil
	}
	ps.mu.Lock()
	if ps.closed {
		ps.mu.Unlock()
		return nil
	}
	ps.closed = true
	ps.mu.Unlock()
	if ps.stop != nil {
		close(ps.stop)
		ps.swept.Wait()
	}
	return ps.expired(ps.now(), true)
}
