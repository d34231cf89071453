package guard

import (
	"context"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// settlement is what Finish needs of an admitted decision: the decision,
// its checks, and each check's rule.
type settlement struct {
	d      limiter.Decision
	checks []limiter.Check
	rules  []int
}

// settles reports whether any check of a request settles after it ends:
// its rule has Settle, or it holds a slot.
func (g *Guard[R]) settles(checks []limiter.Check, rules []int) bool {
	for j, i := range rules {
		if g.rules[i].Settle != nil || g.holdsSlots(checks[j], i) {
			return true
		}
	}
	return false
}

// Finish settles res, the Result of req, once req has ended as end says:
// a slot is released, a rule with Settle is charged its final cost, the
// others keep the cost decided. It does nothing for a Result that settles
// nothing, and settles a Result once, however often it is called. The
// settlement runs within the store's timeout even when ctx, the
// request's, has ended. A release of a slot that failed at the network (a
// failed dial, a timeout, a connection lost in use) is sent again in the
// background until it succeeds or the slot's TTL has passed (see
// limiter.Limiter.Settle and Close): a release is idempotent, and sent
// twice it gives back once. Any other failed settlement keeps the charge
// decided (stricter, never looser). Failures are reported as Decide's
// are, once, whether retried or not. A Settle that panics keeps its
// rule's cost decided, and the rest is settled before the panic goes on:
// the request's slots are released all the same.
func (g *Guard[R]) Finish(ctx context.Context, req R, res *Result, end End) {
	s := res.settle
	if s == nil {
		return
	}
	res.settle = nil
	var buf [4]int
	final := buf[:0]
	for j, i := range s.rules {
		if g.holdsSlots(s.checks[j], i) {
			final = append(final, 0)
		} else {
			final = append(final, s.checks[j].Cost)
		}
	}
	// Deferred, so that it runs also while a Settle's panic unwinds.
	defer func() {
		more, err := g.lim.Settle(context.WithoutCancel(ctx), s.d, final...)
		if err != nil {
			g.fail(ctx, req, err, Event{Decision: more, Rules: ruleNames(s.checks)})
		}
	}()
	for j, i := range s.rules {
		if settle := g.rules[i].Settle; settle != nil && !g.holdsSlots(s.checks[j], i) {
			final[j] = max(0, settle(req, end))
		}
	}
}
