package limiter

import (
	"context"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// leased reports whether checks include a leased rule's check that
// consumes.
func leased(sc []StoreCheck, rules []checked) bool {
	for i, r := range rules {
		if r.leases(sc[i].Cost) {
			return true
		}
	}
	return false
}

// leases reports whether a check of cost is served from its rule's
// leases: the rule is leased, the check consumes, and its algorithm (a
// Plan's, when the check has one) can be leased; any other check of the
// rule is decided by the store as an unleased one is.
func (c checked) leases(cost int) bool {
	return c.rule.lease > 0 && cost > 0 && c.algo.facts.Leasable
}

// decideLeased decides a stack with leased checks: each is served from its
// pool's lease when it holds the cost, denied here when its pool does not
// and its next take is not due (unless the pool cannot bound the store's
// wait for the cost, see denied), and otherwise sent to the store as a
// take of a new lease, with the stack's other checks. A stack the store
// denies (or that fails) spends nothing: what it reserved is restored to
// the leases.
func (l *Limiter) decideLeased(ctx context.Context, sc []StoreCheck, rules []checked) (Decision, error) {
	now := l.local()
	var spendBuf [4]spend
	var outBuf [2]*refund
	spends, out := spendBuf[:0], outBuf[:0]
	// What goes to the store: scratch checks (the store keeps none of them).
	scratch := storeChecks(len(sc))
	defer scratch.recycle()
	var rulesBuf [4]checked
	send, sendRules := scratch.checks[:0], rulesBuf[:0]
	var deniedBy *pool
	var denial algorithms.Result // deniedBy's
	taking := false              // a take of this decision's is marked
	for i, c := range sc {
		r := rules[i].rule
		var p *pool
		if rules[i].leases(c.Cost) && deniedBy == nil {
			p = l.leases.pool(c.Key, now, r.lease)
		}
		if p == nil {
			spends = append(spends, spend{})
			send, sendRules = append(send, c), append(sendRules, rules[i])
			continue
		}
		p.mu.Lock()
		p.used = now
		p.demand += c.Cost
		var ls *lease
		if !p.ahead(c.Cost, now) {
			ls, out = p.reserve(c.Cost, now, out)
		}
		// A take in flight: wait for its lease rather than take too, unless
		// this decision marked a take of its own (two decisions could
		// then wait for each other).
		for ls == nil && p.taking != nil && !now.Before(p.next) && !taking {
			wait := p.taking
			p.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				l.restoreReserved(spends)
				l.refundLeases(out)
				return Decision{}, ctx.Err()
			}
			p.mu.Lock()
			now = l.local()
			ls, out = p.reserve(c.Cost, now, out)
		}
		var refused bool
		if ls == nil && now.Before(p.next) {
			denial, refused = p.denied(rules[i].algo, c.Cost, now)
		}
		switch {
		case ls != nil:
			spends = append(spends, spend{pool: p, lease: ls, n: c.Cost})
		case refused:
			deniedBy = p
			spends = append(spends, spend{pool: p})
		default:
			c.Lease = p.size(now, r.leaseInterval, rules[i].algo.policy.Quota)
			sp := spend{pool: p, n: c.Lease, take: true}
			if p.taking == nil {
				p.taking, taking, sp.marks = make(chan struct{}), true, true
			}
			spends = append(spends, sp)
			send, sendRules = append(send, c), append(sendRules, rules[i])
		}
		p.mu.Unlock()
	}
	l.refundLeases(out)
	out = out[:0]

	var d Decision
	var err error
	if deniedBy == nil && len(send) > 0 {
		d, err = l.decideChecks(ctx, send, sendRules)
	}
	failed := err != nil && !d.Fallback
	allowed := deniedBy == nil && !failed && (len(send) == 0 || d.Allowed)
	full := Decision{Allowed: allowed, At: d.At, Fallback: d.Fallback, Cached: d.Cached, Results: make([]RuleResult, len(sc))}
	if d.At.IsZero() {
		full.At = now
	}
	j := 0
	for i, s := range spends {
		res, r := &full.Results[i], rules[i]
		switch {
		case s.lease != nil: // reserved from a lease
			var rf *refund
			if res.Result, rf = s.pool.resolve(s.lease, s.n, allowed, now); rf != nil {
				out = append(out, rf)
			}
			if allowed {
				res.lease, res.pool = s.lease, s.pool
			}
		case s.pool != nil && s.pool == deniedBy:
			res.Result = denial
		case j >= len(d.Results): // not asked: denied here first, or failed
			res.Result.Allowed, res.Undecided = true, true
		default: // decided by the store
			*res = d.Results[j]
			if s.take {
				ls, rf := s.pool.taken(d, res, send[j], r, s.n, now)
				if rf != nil {
					out = append(out, rf)
				}
				if ls != nil {
					res.lease, res.pool = ls, s.pool
					if l.leases.isClosed() { // Close ran meanwhile: refunded at once
						s.pool.mu.Lock()
						rf = s.pool.end(ls)
						s.pool.mu.Unlock()
						if rf != nil {
							out = append(out, rf)
						}
					}
				}
			}
			j++
		}
		res.Rule, res.Policy, res.check = r.rule.name, r.algo.policy, sc[i]
		if s.marks {
			s.pool.took()
		}
	}
	l.refundLeases(out)
	if failed {
		return Decision{}, err
	}
	return full, err
}

// restoreReserved restores what a decision reserved to its leases and
// ends the takes it marked, when it stops before asking the store.
func (l *Limiter) restoreReserved(spends []spend) {
	for _, s := range spends {
		switch {
		case s.lease != nil:
			if _, rf := s.pool.resolve(s.lease, s.n, false, time.Time{}); rf != nil {
				l.refundLeases([]*refund{rf})
			}
		case s.marks:
			s.pool.took()
		}
	}
}

// local is the time pools run on: the passed-in clock, else the local
// clock (a lease's time to live is local).
func (l *Limiter) local() time.Time {
	if l.cfg.clock != nil {
		return l.cfg.clock()
	}
	return time.Now()
}

// refundLeases refunds ended leases' free units, each to the store that
// leased them: like Settle's refunds, once, never retried (a failure
// leaves the units consumed: stricter, never looser).
func (l *Limiter) refundLeases(out []*refund) error {
	var err error
	for _, rf := range out {
		store := l.store
		if rf.fallback {
			store = l.cfg.fallback
		}
		now, e := l.now()
		if e == nil {
			e = store.Refund(context.Background(), now, rf.at, []StoreRefund{rf.StoreRefund})
		}
		if e != nil && err == nil {
			err = backendError(e)
		}
	}
	return err
}
