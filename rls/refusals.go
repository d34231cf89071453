package rls

import (
	"context"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// decide decides p's checks on lim: those of the limiter in one decision,
// then those of limits of 0 (requests_per_unit 0, which the limiter has
// no rule of), as the reference decides them: refused when they have
// hits, OK with nothing remaining when they have none. A limit of 0 that
// refuses (neither shadow_mode nor quota_mode) refuses the request
// without asking the limiter, all or nothing as any refusal: the
// request's other checks consume nothing and report as not asked.
func (p *plan) decide(ctx context.Context, lim *limiter.Limiter) (limiter.Decision, error) {
	if p.decided == len(p.checks) {
		return lim.Decide(ctx, p.checks...)
	}
	results := make([]limiter.RuleResult, len(p.checks))
	d := limiter.Decision{Allowed: !p.refusedByZero(), At: time.Now(), Results: results}
	if d.Allowed {
		var err error
		if d, err = lim.Decide(ctx, p.checks[:p.decided]...); err != nil && !d.Fallback {
			return d, err
		}
		copy(results, d.Results) // d.Results may share its memory: not appended to
		d.Results = results
	} else {
		for j := range p.checks[:p.decided] {
			results[j] = limiter.RuleResult{Rule: p.checks[j].Rule, Result: algorithms.Result{Allowed: true}, Undecided: true}
		}
	}
	for i, l := range p.limits {
		if j := p.check[i]; j >= p.decided {
			hits := p.checks[j].Cost
			r := limiter.RuleResult{Rule: l.Rule, Policy: algorithms.Policy{Window: l.Window}, Shadow: l.Shadow || l.Quota,
				Result: algorithms.Result{Allowed: hits == 0}}
			if hits > 0 {
				r.RetryAfter = algorithms.Never // no wait admits it
			}
			results[j] = r
		}
	}
	return d, nil
}

// refusedByZero reports whether a check of a limit of 0 refuses p: it has
// hits, and its limit is neither shadow_mode nor quota_mode.
func (p *plan) refusedByZero() bool {
	for i, l := range p.limits {
		if j := p.check[i]; j >= p.decided && p.checks[j].Cost > 0 && !l.Shadow && !l.Quota {
			return true
		}
	}
	return false
}
