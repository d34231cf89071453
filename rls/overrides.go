package rls

import (
	"fmt"
	"strings"
	"sync"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
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
	seen map[overrideKey]*envoy.Limit // the first limit overridden so: its window and plan
}

// overrideKey is an override as a request gives it, and the algorithm
// of the limit it overrides.
type overrideKey struct {
	perUnit, multiplier uint32
	unit                string // the unit's name, lower case
	alg                 string // the limit's AlgorithmName
}

func newOverrides(max int) *overrides {
	if max == 0 {
		max = DefaultMaxOverrides
	}
	return &overrides{max: max, seen: map[overrideKey]*envoy.Limit{}}
}

// apply is l under descriptor i's override o (see envoy.Limit.Overridden),
// and the plan to decide it by (nil when o is l's own limit), counting in
// the same state as l where the limiter can (see "Plans" in the limiter
// package doc). An invalid override, or a new one beyond the cap, is an
// error.
func (ov *overrides) apply(l *envoy.Limit, i int, o *ratelimitv3.RateLimitDescriptor_RateLimitOverride) (*envoy.Limit, algorithms.Algorithm, error) {
	mult := max(o.GetUnitMultiplier().GetValue(), 1)
	name := strings.ToLower(o.GetUnit().String())
	k := overrideKey{perUnit: o.GetRequestsPerUnit(), multiplier: mult, unit: name, alg: l.AlgorithmName}
	ov.mu.Lock()
	v := ov.seen[k]
	if v == nil {
		var err error
		if v, err = l.Overridden(k.perUnit, name, mult); err != nil {
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
	c.Unit, c.PerUnit, c.Multiplier, c.Window, c.Algorithm = v.Unit, v.PerUnit, v.Multiplier, v.Window, v.Algorithm
	if l.Algorithm == v.Algorithm {
		return &c, nil, nil // the configured limit itself
	}
	return &c, v.Algorithm, nil
}
