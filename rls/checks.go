package rls

import "github.com/seed-bff0c9e1/ratelimit/limiter"

// checkOf is the index of the check of rule and identity in p.checks, or
// -1.
func (p *plan) checkOf(rule, identity string) int {
	if p.index != nil {
		if j, ok := p.index[checkKey{rule, identity}]; ok {
			return j
		}
		return -1
	}
	for j := range p.checks {
		if p.checks[j].Rule == rule && p.checks[j].Identity == identity {
			return j
		}
	}
	return -1
}

// addCheck appends c to p.checks and returns its index.
func (p *plan) addCheck(c limiter.Check) int {
	j := len(p.checks)
	p.checks = append(p.checks, c)
	switch {
	case p.index != nil:
		p.index[checkKey{c.Rule, c.Identity}] = j
	case len(p.checks) > maxScan:
		p.index = make(map[checkKey]int, 2*len(p.checks))
		for k := range p.checks {
			p.index[checkKey{p.checks[k].Rule, p.checks[k].Identity}] = k
		}
	}
	return j
}

// maxScan is the most checks checkOf compares one by one: a request's
// are few, and found so without a map built for each request; a request
// of many has them indexed, lest its plan take quadratic time.
const maxScan = 8

// checkKey is a check's rule and identity, as plan.index has them.
type checkKey struct{ rule, identity string }
