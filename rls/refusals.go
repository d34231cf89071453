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
	if p.decideZeros(results) {
		for j := range p.checks[:p.decided] {
			results[j] = limiter.RuleResult{Rule: p.checks[j].Rule, Result: algorithms.Result{Allowed: true}, Undecided: true}
		}
		return limiter.Decision{At: time.Now(), Results: results}, nil
	}
	d, err := lim.Decide(ctx, p.checks[:p.decided]...)
	if err != nil && !d.Fallback {
		return d, err
	}
	copy(results, d.Results) // d.Results may share its memory: not appended to
	d.Results = results
	return d, err
}

// decideZeros writes the results of p's checks of limits of 0 into
// results (at their indices, p.decided on), and reports whether one
// refuses the request.
func (p *plan) decideZeros(results []limiter.RuleResult) (refused bool) {
	for i, l := range p.limits {
		j := p.check[i]
		if j < p.decided {
			continue
		}
		hits := p.checks[j].Cost
		r := limiter.RuleResult{Rule: l.Rule, Policy: algorithms.Policy{Window: l.Window}, Shadow: l.Shadow || l.Quota,
			Result: algorithms.Result{Allowed: hits == 0}}
		if hits > 0 {
			r.RetryAfter = algorithms.Never // no wait admits it
		}
		results[j] = r
		refused = refused || r.Refused()
	}
	return refused
}
