package rls

import (
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Limits returns the limiter rules of configs' limits, unlimited ones
// aside: each a fixed window of its unit aligned to the Unix epoch (the
// windows the reference counts in), a shadow rule under shadow_mode.
// Build the Server's limiter.Limiter on them.
func Limits(configs ...*Config) []limiter.Rule {
	var rules []limiter.Rule
	for _, c := range configs {
		for _, l := range c.limits {
			rules = append(rules, l.limiterRule())
		}
	}
	return rules
}

// limiterRule is l as a limiter rule.
func (l *limit) limiterRule() limiter.Rule {
	return limiter.Rule{
		Name:      l.rule,
		Algorithm: algorithms.FixedWindow{Limit: l.perUnit, Window: l.unit.length},
		Shadow:    l.shadow,
	}
}
