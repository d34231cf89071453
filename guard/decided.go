package guard

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// decided is the Result of a decided request: it reports the decision,
// holds a queued request until its turn, and keeps what Finish settles.
// err is a backend failure the fallback store decided despite, which goes
// to the error handler.
func (g *Guard[R]) decided(ctx context.Context, req R, d limiter.Decision, err error, checks []limiter.Check, rules []int, start time.Time) (res Result) {
	shadow := !d.Allowed && g.cfg.ShadowMode
	res = Result{Outcome: Refused, Decision: g.advertised(d, checks, rules), Shadow: shadow, Err: err}
	if d.Allowed && g.settles(checks, rules) {
		res.settle = &settlement{d: d, checks: slices.Clone(checks), rules: slices.Clone(rules)}
		// An error handler, a hook or a log that panics never hands res
		// to the door: settle it here, so that its slots are not held
		// until their TTL.
		defer func() {
			if p := recover(); p != nil {
				g.Finish(ctx, req, &res, End{})
				panic(p)
			}
		}()
	}
	if err != nil {
		g.onError(req, err) // the backend failed; the fallback decided
	}
	if g.cfg.Hook != nil {
		g.report(ctx, req, Event{Decision: d, KeyHashes: keyHashes(checks), Shadow: shadow, Err: err,
			Rules: ruleNames(checks), Duration: since(start)})
	}
	g.logShadow(req, d)
	switch {
	case d.Allowed && queued(d):
		// A queue: hold the request until its turn; a client that leaves
		// first gives its turn back.
		if herr := g.lim.Hold(ctx, d); herr != nil {
			if ctx.Err() != nil && !errors.Is(herr, limiter.ErrBackend) {
				return Result{Outcome: Canceled, Decision: res.Decision, Err: ctx.Err()}
			}
			g.onError(req, herr)
			return Result{Outcome: Failed, Decision: res.Decision, Err: herr}
		}
		res.Outcome = Admitted
	case d.Allowed || shadow:
		res.Outcome = Admitted
	}
	return res
}

// queued reports whether an allowed d waits for its turn in a Queue rule.
func queued(d limiter.Decision) bool {
	for _, res := range d.Results {
		if res.Delay > 0 && !res.Shadow {
			return true
		}
	}
	return false
}

// advertised is d as a door tells it: a concurrency limit's waits (a
// refusal's RetryAfter, and NextAfter) at most Config.SlotRetry. The
// oldest slot's expiry that the limiter reports is only the latest a slot
// can come back. A block's wait is kept. d's results are copied before a
// change: the limiter's decision, which Hold and Settle use, is left
// alone.
func (g *Guard[R]) advertised(d limiter.Decision, checks []limiter.Check, rules []int) limiter.Decision {
	copied := false
	for j, i := range rules {
		res := d.Results[j]
		if res.Blocked || !g.holdsSlots(checks[j], i) {
			continue
		}
		retry, next := res.RetryAfter, min(res.NextAfter, g.cfg.SlotRetry)
		if !res.Allowed && retry != algorithms.Never {
			retry = min(retry, g.cfg.SlotRetry)
		}
		if retry == res.RetryAfter && next == res.NextAfter {
			continue
		}
		if !copied {
			d.Results, copied = slices.Clone(d.Results), true
		}
		d.Results[j].RetryAfter, d.Results[j].NextAfter = retry, next
	}
	return d
}

// holdsSlots reports whether check c of rule i takes slots: its algorithm
// (its Plan's, or the rule's) holds its units in flight.
func (g *Guard[R]) holdsSlots(c limiter.Check, i int) bool {
	if c.Plan == nil {
		return g.inFlight[i]
	}
	return algorithms.PolicyOf(c.Plan).InFlight()
}
