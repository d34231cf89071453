package envoy

import (
	"strconv"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Limits returns the limiter rules of configs' limits, unlimited ones
// aside: each of its algorithm (a fixed window aligned to the Unix epoch,
// the windows the reference counts in, unless the rate_limit names
// another) over its window, leased for its lease, a shadow rule under
// shadow_mode (none for a requests_per_unit of 0, which refuses every
// request without the limiter); and after each config's, the rule its limit overrides are
// decided on when the descriptor matches no limit (see docs/envoy.md).
// Build the limiter.Limiter that decides for configs (the rls Server's)
// on them.
func Limits(configs ...*Config) []limiter.Rule {
	var rules []limiter.Rule
	for _, c := range configs {
		for _, l := range c.limits {
			if !l.unlimited && !l.refusesAll() {
				rules = append(rules, l.limiterRule())
			}
		}
		rules = append(rules, c.override.limiterRule())
	}
	return rules
}

// refusesAll reports whether l is requests_per_unit 0: every request with
// hits over it is refused, without the limiter (which has no rule of l).
func (l *limit) refusesAll() bool { return !l.unlimited && l.perUnit == 0 }

// limiterRule is l as a limiter rule.
func (l *limit) limiterRule() limiter.Rule {
	return limiter.Rule{
		Name:      l.rule,
		Algorithm: l.alg.build(l.perUnit, l.burst, l.unit.length),
		Lease:     l.lease,
		Shadow:    l.shadow || l.quota,
	}
}

// validate reports what the limiter would refuse of l's rule: its
// algorithm at the rate_limit, and its lease at the lease key with what
// is allowed.
func (l *limit) validate(p *problems, at limitNodes, field string) {
	if l.refusesAll() {
		return // no rule: the limiter never decides it
	}
	r := l.limiterRule()
	r.Name = "rls" // the rule's name is given once the file is whole
	r.Lease = 0
	if err := r.Validate(); err != nil {
		p.add(at.rate, field, "found %v: %s", r.Algorithm, limiterSays(err, r.Name))
		return
	}
	r.Lease = l.lease
	err := r.Validate()
	if err == nil {
		return
	}
	msg := limiterSays(err, r.Name)
	unshadowed := r
	unshadowed.Shadow = false
	switch {
	case r.Shadow && unshadowed.Validate() == nil:
		key := "quota_mode"
		if l.shadow {
			key = "shadow_mode"
		}
		msg += "; allowed: no lease on a " + key + " descriptor (remove one of them)"
	case (limiter.Rule{Name: r.Name, Algorithm: r.Algorithm, Lease: time.Second}).Validate() != nil:
		msg += "; allowed: a lease only on " + leasable()
	}
	p.add(at.lease, field+".lease", "found %s: %s", yamlnode.Describe(at.lease), msg)
}

// limiterSays is the limiter's complaint err about the rule named name,
// without what every such error starts with.
func limiterSays(err error, name string) string {
	msg := strings.TrimPrefix(err.Error(), ratelimit.ErrConfig.Error()+": ")
	return strings.TrimPrefix(msg, "rule "+strconv.Quote(name)+": ")
}
