package limiter

import (
	"context"
	"sync"

	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/lease"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/scratch"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// The limiter's side of quota leases (see "Leases" in the package doc):
// package lease keeps the pools and says, per check, whether a lease
// serves it; the limiter sends the rest of the stack and the takes to the
// store, and each refund to the store that decided it. A lease holds the
// check it took (its Cost every unit taken); a Token crosses between the
// two only here, and a nil *lease.Pools (no leased rule) holds nothing.

// leased reports whether checks include a check a lease serves.
func leased(sc []store.Check, rules []checked) bool {
	for i, r := range rules {
		if r.leases(sc[i].Cost) {
			return true
		}
	}
	return false
}

// leases reports whether a check of cost is served from its rule's leases
// (see lease.Rule.Serves). A pool holds units of the rule's own
// parameters: a check under another Plan (which may share the rule's key)
// is decided by the store as an unleased check is.
func (c checked) leases(cost int) bool {
	return c.algo.params == c.rule.algo.params && c.rule.lease.Serves(&c.algo.lease, cost)
}

// decideLeased decides a stack with leased checks: package lease serves
// each from its pool, refuses it there, or sizes a take of a new lease,
// which goes to the store with the stack's other checks. A stack the store
// denies (or that fails) spends nothing: what it reserved is restored to
// the leases.
func (l *Limiter) decideLeased(ctx context.Context, sc []store.Check, rules []checked) (Decision, error) {
	st := l.leases.Stack()
	// What goes to the store: scratch checks (the store keeps none of them).
	buf := scratch.Get(len(sc))
	defer buf.Recycle()
	send, sendRules := buf.Checks[:0], make([]checked, 0, 4)
	for i, c := range sc {
		n, ok, err := st.Add(ctx, c.Key, c.Cost, rules[i].leases(c.Cost), &rules[i].rule.lease, &rules[i].algo.lease)
		if err != nil {
			l.refundLeases(ctx, st.Refunds())
			return Decision{}, err
		}
		if ok {
			c.LeaseUnits = n
			send, sendRules = append(send, c), append(sendRules, rules[i])
		}
	}
	l.refundLeases(ctx, st.Refunds())
	var d Decision
	var err error
	if !st.Refused() && len(send) > 0 {
		d, err = l.decideChecks(ctx, send, buf.Results[:len(send)], sendRules)
	}
	failed := err != nil && !d.Fallback
	full := Decision{Allowed: !st.Refused() && !failed && (len(send) == 0 || d.Allowed), At: d.At, Fallback: d.Fallback, Cached: d.Cached, Results: newResults(len(sc))}
	if d.At.IsZero() {
		full.At = st.Now()
	}
	for i, j := 0, 0; i < len(sc); i++ {
		res := &full.Results[i]
		var local bool
		if res.Result, res.lease, local = st.Result(i, full.Allowed); !local && j < len(d.Results) { // decided by the store
			*res = d.Results[j]
			if c := send[j]; st.Takes(i) {
				c.Cost += res.Leased
				res.lease = st.Taken(i, lease.Take[store.Check]{Allowed: d.Allowed, At: d.At, Fallback: d.Fallback, Cost: send[j].Cost,
					Leased: res.Leased, Token: res.Token, Check: c}, &res.Result)
			}
			j++
		} else if !local { // not asked: refused here first, or failed
			res.Allowed, res.Undecided = true, true
		}
		rules[i].name(res, &sc[i])
	}
	l.refundLeases(ctx, st.Finish())
	if failed {
		return Decision{}, err
	}
	return full, err
}

// refundsAtOnce bounds the refunds refundLeases has in flight. Each may
// wait for the store's timeout (Redis stalled): 16 at a time wait one
// timeout per 16 leases, not one per lease, and stay within a Redis
// client's default pool (go-redis: 10 connections per CPU), beside the
// decisions that share it.
const refundsAtOnce = 16

// refundLeases refunds ended leases' free units, each to the store that
// leased them, within ctx (a decision's refunds within its caller's
// deadline), refundsAtOnce at a time: like Settle's refunds, once, never
// retried (a failure leaves the units consumed: stricter, never looser).
// It returns the error of the first refund of out that failed.
func (l *Limiter) refundLeases(ctx context.Context, out []lease.Refund[store.Check]) error {
	switch len(out) {
	case 0:
		return nil
	case 1:
		return l.refundLease(ctx, out[0])
	}
	errs := make([]error, len(out))
	slots := make(chan struct{}, refundsAtOnce)
	var wg sync.WaitGroup
	for i, rf := range out {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = l.refundLease(ctx, rf)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// refundLease sends rf, one refund of refundLeases, to its store.
func (l *Limiter) refundLease(ctx context.Context, rf lease.Refund[store.Check]) error {
	back := storeRefund(rf.Check, l.algoOf(rf.Check.Algorithm), rf.Back, rf.Token)
	return l.refund(ctx, Decision{At: rf.At, Fallback: rf.Fallback}, []store.Refund{back})
}

// Close refunds the units of every lease (see Rule.Lease) to the store and
// stops leasing, and the sweeper: later decisions of leased rules ask the
// store each time. The refunds go out together, up to 16 at a time, each
// within the store's timeout: with Redis stalled, Close waits about one
// timeout per 16 leases, not one per lease (and first for the sweeper's
// refunds under way, sent the same way). It returns the store's error
// when a refund failed (one of them, when several did). Such a refund is
// not sent again, and its outcome is unknown: one that timed out may still
// have been applied (Redis runs a script it received even after the
// caller stopped waiting); units not refunded stay consumed until the
// rule's state recovers them.
//
// Close also ends the retries of slot releases (see Settle), once the
// refunds are answered: each release still pending is sent one last time,
// within a second, and the goroutine that retries them stops; a release
// that fails then is given up (and logged), its slot held until its TTL.
// Releases that fail after Close are not retried. Close is safe to call
// more than once.
func (l *Limiter) Close() error {
	err := l.refundLeases(context.Background(), l.leases.Close())
	l.releases.Close()
	return err
}
