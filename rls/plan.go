package rls

import (
	"fmt"
	"slices"
	"strconv"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// plan is what a request asks of the limiter: per descriptor its limit
// (nil: none) and the index of its check, and the checks, one per limit
// and identity (descriptors that meet in one add their hits).
type plan struct {
	req    *rlsv3.RateLimitRequest // as asked, for Options.ResponseDynamicMetadata
	limits []*envoy.Limit
	check  []int // per descriptor; -1: no check
	checks []limiter.Check
	// decided is how many of checks the limiter decides; those after it
	// are of limits of 0 (requests_per_unit 0), which refusals decides.
	decided int
	index   map[checkKey]int // p.checks by rule and identity, once many (see checkOf)
	// own backs the slices of a request of up to smallPlan descriptors,
	// so that its plan is one allocation.
	own struct {
		limits [smallPlan]*envoy.Limit
		check  [smallPlan]int
		checks [smallPlan]limiter.Check
	}
}

// smallPlan is the most descriptors a plan holds without allocating its
// slices apart (Envoy's requests carry a few).
const smallPlan = 4

// newPlanOf is the plan of n descriptors, none matched yet: no limit, no
// check.
func newPlanOf(n int) *plan {
	p := &plan{}
	if n <= smallPlan {
		p.limits, p.check, p.checks = p.own.limits[:n], p.own.check[:n], p.own.checks[:0]
	} else {
		p.limits, p.check, p.checks = make([]*envoy.Limit, n), make([]int, n), make([]limiter.Check, 0, n)
	}
	for i := range p.check {
		p.check[i] = -1
	}
	return p
}

// matched is what newPlan keeps of a descriptor until it builds the
// checks.
type matched struct {
	id         string
	plan       algorithms.Algorithm
	hits       int
	overridden bool
}

// maxHits is where a descriptor's hits, and a check's summed cost, stop
// counting: 2^53, above the largest limit, rate or burst the library
// accepts (2^53-1, so that Lua's float64 and Go agree), so that hits
// above it are refused as the hits they stand for would be, and a sum of
// many stays far from overflowing an int.
const maxHits = 1 << 53

// newPlan matches req's descriptors in c (nil: a domain with no limits),
// a descriptor's limit override applied through ov. A limit that another
// matched limit replaces (rate_limit.replaces) is not applied: its
// descriptor is OK with no limit. A descriptor under an override neither
// replaces nor is replaced, as in the reference.
func newPlan(c domain, req *rlsv3.RateLimitRequest, ov *overrides) (*plan, error) {
	n := len(req.GetDescriptors())
	p := newPlanOf(n)
	p.req = req
	var small [smallPlan]matched // m of a few descriptors, on the stack
	m := small[:min(n, smallPlan)]
	if n > smallPlan {
		m = make([]matched, n)
	}
	for i, d := range req.GetDescriptors() {
		if d.GetIsNegativeHits() {
			return nil, fmt.Errorf("ratelimit: descriptor %d: is_negative_hits is refused: units can be given back exactly only against the decision that took them, and an RLS call names none, so a give-back could return more than was taken", i)
		}
		h := uint64(max(req.GetHitsAddend(), 1))
		if a := d.GetHitsAddend(); a != nil {
			h = a.GetValue()
		}
		m[i].hits = int(min(h, maxHits))
		if c == nil {
			continue
		}
		l, id, planned, err := c.limitOf(d)
		if err != nil {
			return nil, fmt.Errorf("ratelimit: descriptor %d: %w", i, err)
		}
		if l == nil {
			continue
		}
		if l.Unlimited {
			p.limits[i] = l
			continue
		}
		m[i].id, m[i].plan = id, planned
		if o := d.GetLimit(); o != nil {
			var over algorithms.Algorithm
			if l, over, err = ov.apply(l, i, o); err != nil {
				return nil, err
			}
			if over != nil { // nil: the override is l's own limit
				m[i].plan = over
			}
			m[i].overridden = true
		}
		p.limits[i] = l
	}
	replaced := replacedNames(p.limits, m)
	for i, l := range p.limits {
		if l != nil && !l.Unlimited && l.Name != "" && replaced[l.Name] && !m[i].overridden {
			p.limits[i] = nil
		}
	}
	// The limiter's checks first, then those of limits of 0, which it has
	// no rule of (see refusals).
	for _, zero := range [...]bool{false, true} {
		for i, l := range p.limits {
			if l == nil || l.Unlimited || (l.PerUnit == 0) != zero {
				continue
			}
			if err := p.checkDescriptor(i, l, m[i]); err != nil {
				return nil, err
			}
		}
		if !zero {
			p.decided = len(p.checks)
		}
	}
	if p.decided > maxChecks {
		return nil, fmt.Errorf("ratelimit: the request's descriptors make %d checks (distinct limits and values): at most %d are decided together", p.decided, maxChecks)
	}
	return p, nil
}

// maxChecks is the most checks limiter.Decide takes in one decision (one
// script run, during which Redis serves nobody else).
const maxChecks = 256

// checkDescriptor adds descriptor i's hits under its limit l to the check
// of l's rule and its identity, a new one if none.
func (p *plan) checkDescriptor(i int, l *envoy.Limit, m matched) error {
	j := p.checkOf(l.Rule, m.id)
	switch {
	case j < 0:
		j = p.addCheck(limiter.Check{Rule: l.Rule, Identity: m.id, Plan: m.plan})
	case p.checks[j].Plan != m.plan:
		return fmt.Errorf("ratelimit: descriptor %d: the same limit and values as descriptor %d under another limit override", i, slices.Index(p.check, j))
	}
	p.checks[j].Cost = min(p.checks[j].Cost+m.hits, maxHits)
	p.check[i] = j
	return nil
}

// identity is who a descriptor's check limits: its entries' values, each
// quoted (so that no value can pass for two, nor two for one) and hashed
// (so that the key is short, holds no raw bytes a client chose, and
// routes on Redis Cluster like any other); with keyed, each value after
// its key, quoted too (a check under the domain's override rule, which
// the descriptor's keys do not name). An entry whose bit is set in
// shared (it reached a wildcard with share_threshold) is written as *,
// which no quoted value is: every value of the wildcard is the same one
// there (the rule names the wildcard: one limit has one path of entries).
func identity(d *ratelimitv3.RateLimitDescriptor, keyed bool, shared uint64) string {
	var buf [128]byte // the quoted values, on the stack when they fit
	b := buf[:0]
	for i, e := range d.GetEntries() {
		switch {
		case keyed:
			b = strconv.AppendQuote(b, e.GetKey())
			b = strconv.AppendQuote(b, e.GetValue())
		case shared&(1<<i) != 0: // 0 past bit 63
			b = append(b, '*')
		default:
			b = strconv.AppendQuote(b, e.GetValue())
		}
	}
	return keyfunc.Hash(string(b))
}

// entries is d's entries' keys and values, as Config.Match takes them:
// their number and the i-th.
func entries(d *ratelimitv3.RateLimitDescriptor) (int, func(int) (string, string)) {
	es := d.GetEntries()
	return len(es), func(i int) (string, string) { return es[i].GetKey(), es[i].GetValue() }
}

// replacedNames is the names the limits of ls (per descriptor; nil:
// none) replace, those under a limit override (per m) aside; nil when
// none.
func replacedNames(ls []*envoy.Limit, m []matched) map[string]bool {
	var r map[string]bool
	for i, l := range ls {
		if l == nil || m[i].overridden {
			continue
		}
		for _, name := range l.Replaces {
			if r == nil {
				r = map[string]bool{}
			}
			r[name] = true
		}
	}
	return r
}
