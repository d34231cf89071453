package rls

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// DefaultMaxOverrides is how many distinct limit overrides a Server
// accepts when Options.MaxOverrides is 0.
const DefaultMaxOverrides = 1000

// overrides are the distinct limit overrides (a descriptor's limit field)
// a Server has accepted, at most max of them. Each is decided as a
// limiter.Check Plan, which the limiter validates once and keeps by value
// for its whole life: the cap is what bounds that memory, and the number
// of distinct plans, whatever a client sends. An override accepted once
// stays accepted; a new one beyond the cap is refused.
type overrides struct {
	mu   sync.Mutex
	max  int
	seen map[overrideKey]*override
}

// overrideKey is an override as a request gives it, and the algorithm
// of the limit it overrides.
type overrideKey struct {
	perUnit, multiplier uint32
	unit                string // the unit's name in units
	alg                 algorithm
}

// override is an accepted override: its window and its plan.
type override struct {
	unit       unit // its length the whole window: unit times multiplier
	perUnit    uint32
	multiplier uint32
	plan       algorithms.Algorithm
}

func newOverrides(max int) *overrides {
	if max == 0 {
		max = DefaultMaxOverrides
	}
	return &overrides{max: max, seen: map[overrideKey]*override{}}
}

// apply is l under descriptor i's override o, and the plan to decide it
// by (nil when o is l's own limit): l's algorithm over o's unit times its
// multiplier (a fixed window aligned to the Unix epoch as l's own; a
// bucket's capacity or GCRA's burst o's requests_per_unit), counting in
// the same state as l where the limiter can (see "Plans" in the limiter
// package doc). An invalid override,
// or a new one beyond the cap, is an error.
func (ov *overrides) apply(l *limit, i int, o *ratelimitv3.RateLimitDescriptor_RateLimitOverride) (*limit, algorithms.Algorithm, error) {
	mult := max(o.GetUnitMultiplier().GetValue(), 1)
	name := strings.ToLower(o.GetUnit().String())
	k := overrideKey{perUnit: o.GetRequestsPerUnit(), multiplier: mult, unit: name, alg: l.alg}
	ov.mu.Lock()
	v := ov.seen[k]
	if v == nil {
		var err error
		if v, err = newOverride(l, k); err != nil {
			ov.mu.Unlock()
			return nil, nil, fmt.Errorf("ratelimit: descriptor %d: limit override: %w", i, err)
		}
		if len(ov.seen) >= ov.max {
			ov.mu.Unlock()
			return nil, nil, fmt.Errorf("ratelimit: descriptor %d: limit override of %d per %d %s: this server has accepted %d distinct overrides, its most (each is kept for the life of the process)", i, k.perUnit, k.multiplier, name, ov.max)
		}
		ov.seen[k] = v
	}
	ov.mu.Unlock()
	c := *l
	c.unit, c.perUnit, c.multiplier = v.unit, int(v.perUnit), v.multiplier
	if alg := l.limiterRule().Algorithm; alg == v.plan {
		return &c, nil, nil // the configured limit itself
	}
	return &c, v.plan, nil
}

// newOverride validates k as a plan of l's rule.
func newOverride(l *limit, k overrideKey) (*override, error) {
	u, ok := units[k.unit]
	if !ok {
		return nil, fmt.Errorf("unit %s; allowed: second, minute, hour, day, month, year", strings.ToUpper(k.unit))
	}
	if k.perUnit == 0 {
		return nil, fmt.Errorf("requests_per_unit 0; allowed: 1 or more")
	}
	if int64(k.multiplier) > math.MaxInt64/int64(u.length) {
		return nil, fmt.Errorf("unit_multiplier %d is too large", k.multiplier)
	}
	u.length *= time.Duration(k.multiplier)
	plan := k.alg.build(int(k.perUnit), 0, u.length)
	if err := (limiter.Rule{Name: l.rule, Algorithm: plan}).Validate(); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "ratelimit: "))
	}
	return &override{unit: u, perUnit: k.perUnit, multiplier: k.multiplier, plan: plan}, nil
}

// overrideLimit is domain's limit for the limit overrides of descriptors
// that match no limit, or an unlimited one, which the reference limits
// under the descriptor's own keys and values: one rule per domain (its
// name "_", a hash of the domain, then ".domain.override"), every such
// check a plan of the override (a fixed window of its unit, as the
// reference counts) on an identity of the descriptor's keys and values.
// Overrides of one unit share the descriptor's count, as the reference's
// do. Its own algorithm, one a second, is never decided: every check of
// it carries its plan. It has no name, no shadow_mode and no replaces.
func overrideLimit(domain string) *limit {
	l := &limit{unit: units["second"], perUnit: 1, multiplier: 1}
	l.rule = hashedName(domain+".override", "override\x00"+strconv.Quote(domain))
	return l
}
