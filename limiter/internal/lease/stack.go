package lease

import (
	"context"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Stack is one decision's part in the pools: per check of the stack, in
// order, units reserved from a lease, a refusal made here, a take sent to
// the store, or nothing (the store decides the check as it would
// unleased). The refunds it makes on the way wait in it for the limiter
// (see Refunds and Finish).
type Stack[C any] struct {
	ps       *Pools[C]
	now      time.Time
	first    [4]spend[C] // the spends of the stack's first checks
	more     []spend[C]  // of the others
	n        int         // the checks added
	out      []Refund[C]
	deniedBy *pool[C]
	denial   algorithms.Result // deniedBy's
	taking   bool              // a take of this decision's is marked
	ended    bool              // its takes are over (endTakes)
}

// spend is a check's part in a decision.
type spend[C any] struct {
	pool  *pool[C]  // nil: not served by the pools
	lease *Lease[C] // reserved from, or nil
	n     int       // the units reserved, or asked beyond the cost
	take  bool
	marks bool // the take is the pool's take in flight (pool.taking)
	rule  *Rule
	algo  *Algo
}

// Stack starts a decision on the pools.
func (ps *Pools[C]) Stack() Stack[C] {
	return Stack[C]{ps: ps, now: ps.now()}
}

// add appends sp, the spend of the next check.
func (s *Stack[C]) add(sp spend[C]) {
	if s.n < len(s.first) {
		s.first[s.n] = sp
	} else {
		s.more = append(s.more, sp)
	}
	s.n++
}

// spend is check i's spend.
func (s *Stack[C]) spend(i int) *spend[C] {
	if i < len(s.first) {
		return &s.first[i]
	}
	return &s.more[i-len(s.first)]
}

// Add adds the next check, of the key and cost, of rule r and algorithm
// a, to the stack. When serves is set (see Rule.Serves) it is served from
// its pool's lease when that holds the cost, refused here when its pool
// does not and its next take is not due (unless the pool cannot bound the
// store's wait for the cost, see denied), and otherwise sent to the store
// as a take of lease units beyond its cost. send reports whether the
// store decides the check: a take, or a check the pools do not serve
// (serves is false, the pools are closed or full, or an earlier check was
// refused), of lease 0. A take in flight for the pool is waited for; when
// ctx ends meanwhile, Add restores what the stack reserved and returns
// ctx's error (the refunds it made are in Refunds).
func (s *Stack[C]) Add(ctx context.Context, key store.Key, cost int, serves bool, r *Rule, a *Algo) (lease int, send bool, err error) {
	var p *pool[C]
	if serves && s.deniedBy == nil {
		p = s.ps.pool(key, s.now, r.Lease)
	}
	if p == nil {
		s.add(spend[C]{})
		return 0, true, nil
	}
	p.mu.Lock()
	p.used = s.now
	p.demand += cost
	var l *Lease[C]
	if !p.ahead(cost, s.now) {
		l, s.out = p.reserve(cost, s.now, s.out)
	}
	// A take in flight: wait for its lease rather than take too, unless
	// this decision marked a take of its own (two decisions could then
	// wait for each other).
	for l == nil && p.taking != nil && !s.now.Before(p.next) && !s.taking {
		wait := p.taking
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			s.abort()
			return 0, false, ctx.Err()
		}
		p.mu.Lock()
		if p.forgotten { // a Reset voided the take: the store decides, unleased
			p.mu.Unlock()
			s.add(spend[C]{})
			return 0, true, nil
		}
		s.now = s.ps.now()
		l, s.out = p.reserve(cost, s.now, s.out)
	}
	var refused bool
	if l == nil && s.now.Before(p.next) {
		s.denial, refused = p.denied(a, cost, s.now)
	}
	sp := spend[C]{pool: p}
	switch {
	case l != nil:
		sp.lease, sp.n = l, cost
	case refused:
		s.deniedBy = p
	default:
		sp.n, sp.take, sp.rule, sp.algo = p.size(s.now, r.Interval, a.Quota), true, r, a
		p.takes++
		if p.taking == nil {
			p.taking, s.taking, sp.marks = make(chan struct{}), true, true
		}
	}
	p.mu.Unlock()
	s.add(sp)
	if !sp.take {
		return 0, false, nil
	}
	return sp.n, true, nil
}

// abort restores what the stack reserved, when it stops before asking
// the store, and ends the takes it marked.
func (s *Stack[C]) abort() {
	for i := range s.n {
		if sp := s.spend(i); sp.lease != nil {
			_, s.out = sp.pool.resolve(sp.lease, sp.n, false, time.Time{}, s.out)
			sp.lease = nil
		}
	}
	s.endTakes()
}

// Refused reports whether a check was refused here: the store is not
// asked.
func (s *Stack[C]) Refused() bool { return s.deniedBy != nil }

// Now is the local time the stack was decided at.
func (s *Stack[C]) Now() time.Time { return s.now }

// Result is check i's result when the pools decided it: served from a
// lease (the stack allowed: spent, else restored; held is the lease it
// was served from when spent), or refused here. ok is false for the checks
// the store decides.
func (s *Stack[C]) Result(i int, allowed bool) (r algorithms.Result, held *Lease[C], ok bool) {
	sp := s.spend(i)
	switch {
	case sp.lease != nil:
		r, s.out = sp.pool.resolve(sp.lease, sp.n, allowed, s.now, s.out)
		if allowed {
			held = sp.lease
		}
		return r, held, true
	case sp.pool != nil && sp.pool == s.deniedBy:
		return s.denial, nil, true
	}
	return r, nil, false
}

// Take is what the store decided of a check that may be a take.
type Take[C any] struct {
	Allowed  bool      // the stack was allowed
	At       time.Time // its instant
	Fallback bool      // the fallback store decided it
	Cost     int       // the request's cost, without the lease
	Leased   int       // the units the store took beyond Cost
	Token    store.Token
	Check    C // the check as decided (of cost Cost+Leased), for its refund
}

// Takes reports whether check i was sent to the store as a take.
func (s *Stack[C]) Takes(i int) bool { return s.spend(i).take }

// Taken records the store's result res of check i, a take (see Takes),
// decided as d says: on an allowed stack, the lease it took (returned),
// and what the pool holds in res's Remaining; when the rule denied, or
// the take came up short (the store had less than asked), no take before
// the rule's interval has passed, or the rule's wait if longer.
func (s *Stack[C]) Taken(i int, d Take[C], res *algorithms.Result) *Lease[C] {
	sp := s.spend(i)
	cost, leased, token := d.Cost, d.Leased, d.Token
	p, iv := sp.pool, sp.rule.Interval
	p.mu.Lock()
	if !res.Allowed {
		if res.RetryAfter != algorithms.Never {
			p.next = s.now.Add(max(iv, res.RetryAfter))
		}
		p.seen, p.seenAt, p.seenFor = *res, s.now, cost
		p.mu.Unlock()
		return nil
	}
	if !d.Allowed {
		p.mu.Unlock()
		return nil // another rule denied: nothing was taken
	}
	p.seen, p.seenAt, p.seenFor = *res, s.now, cost
	if leased < sp.n {
		p.next = s.now.Add(iv)
	}
	l := &Lease[C]{pool: p, check: d.Check, size: cost + leased, token: token, at: d.At, fallback: d.Fallback,
		expires: s.now.Add(expiry(sp.algo, token.Stamp, d.At, sp.rule.Lease)), free: leased}
	if p.forgotten { // a Reset ran while the take was in flight: void, neither spent nor refunded
		l.ended, l.refunded = true, true
		p.mu.Unlock()
		return l
	}
	if l.free > 0 {
		s.out = p.install(l, s.now, s.out)
	}
	res.Remaining += p.held()
	p.mu.Unlock()
	if s.ps.isClosed() { // Close ran meanwhile: refunded at once
		p.mu.Lock()
		s.out = p.end(l, s.out)
		p.mu.Unlock()
	}
	return l
}

// Refunds returns the refunds the stack made so far, and forgets them.
func (s *Stack[C]) Refunds() []Refund[C] {
	out := s.out
	s.out = s.out[:0]
	return out
}

// Finish ends the takes the stack marked (the requests waiting for them go
// on) and returns its refunds: the stack is over.
func (s *Stack[C]) Finish() []Refund[C] {
	s.endTakes()
	return s.Refunds()
}

// endTakes ends the stack's takes, once: the pools may forget their
// pools again, and the requests waiting for those it marked go on.
func (s *Stack[C]) endTakes() {
	if s.ended {
		return
	}
	s.ended = true
	for i := range s.n {
		if sp := s.spend(i); sp.take {
			sp.pool.took(sp.marks)
		}
	}
}
