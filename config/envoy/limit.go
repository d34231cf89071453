package envoy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Limit is a configured rate_limit as a server deciding it sees it: what
// Match gives for a descriptor, and what Overridden makes of it under a
// descriptor's limit override.
type Limit struct {
	// Name is rate_limit.name, reported back as given; "" for none.
	Name string
	// Rule is the limiter rule's name (one of those Limits gives); ""
	// when Unlimited.
	Rule string
	// Unit is the unit's name: second, minute, hour, day, week, month or
	// year; "" when Unlimited.
	Unit string
	// PerUnit is requests_per_unit: the limit per window, or a bucket's
	// or GCRA's rate per window. 0 (a fixed window only) refuses every
	// request with hits, as the reference does: the limiter has no rule
	// of it, and Algorithm is a fixed window of 0 that is never decided.
	PerUnit int
	// Multiplier is how many units the window is; 1 for one.
	Multiplier uint32
	// Window is the whole window: Unit times Multiplier.
	Window time.Duration
	// AlgorithmName is the rate_limit's algorithm word (fixed_window,
	// sliding_window, sliding_log, token_bucket, leaky_bucket, gcra).
	AlgorithmName string
	// Algorithm is the rule's algorithm (a fixed window aligned to the
	// Unix epoch for fixed_window); under an override, the plan to decide
	// the rule by. Nil when Unlimited.
	Algorithm algorithms.Algorithm
	// Lease is the rule's lease; 0 for none.
	Lease time.Duration
	// Unlimited is rate_limit.unlimited: the descriptor is never limited.
	Unlimited bool
	// Shadow is shadow_mode: the rule is a shadow rule.
	Shadow bool
	// Quota is quota_mode: the rule is a shadow rule, and a descriptor
	// over it is answered OK, with its limit and what remains.
	Quota bool
	// Replaces are the names of the limits this one replaces.
	Replaces []string
	// Metadata is the metadata of the limit's descriptor, as YAML reads
	// it with JSON's values (numbers, strings, booleans, null, lists and
	// mappings keyed by text); nil for none. Shared by every request:
	// read it, never change it.
	Metadata map[string]any
}

// asView is l as Match gives it.
func (l *limit) asView() *Limit {
	v := &Limit{Name: l.name, Rule: l.rule, Unit: l.unit.name, PerUnit: l.perUnit, Multiplier: max(l.multiplier, 1),
		Window: l.unit.length, AlgorithmName: string(orFixed(l.alg)), Lease: l.lease, Unlimited: l.unlimited, Shadow: l.shadow, Quota: l.quota,
		Metadata: l.metadata}
	if !l.unlimited {
		v.Algorithm = l.limiterRule().Algorithm
	}
	for _, r := range l.replaces {
		v.Replaces = append(v.Replaces, r.name)
	}
	return v
}

// Override is the limit under which a descriptor's limit override is
// decided when the descriptor matches no limit of c, or an unlimited
// one, as the reference limits it under the descriptor's own keys and
// values: a rule of c's domain alone (named "_", a hash of the domain,
// then ".domain.override"; Limits gives it after the domain's other
// rules), on which every such check is a plan of its override (see
// Overridden), its identity the descriptor's keys and values. Its own
// algorithm, one a second, is never decided. It has no name, no
// shadow_mode and replaces nothing.
func (c *Config) Override() *Limit { return c.override.view }

// overrideLimit is domain's limit for Override.
func overrideLimit(domain string) *limit {
	l := &limit{unit: units["second"], perUnit: 1, multiplier: 1}
	l.rule = hashedName(domain+".override", "override\x00"+strconv.Quote(domain))
	return l
}

// Overridden is l under a descriptor's limit override of perUnit per
// multiplier (0: 1) units named unit (second to year, any case): l's
// algorithm over that window, a fixed window aligned to the Unix epoch as
// l's own, a bucket's capacity or GCRA's burst perUnit; Algorithm is that
// plan. An override of 0 per unit refuses every request with hits, as the
// reference's does: its PerUnit is 0, and it is not decided (see PerUnit).
// An override the limiter would refuse as a plan of l's rule is an error
// saying why.
func (l *Limit) Overridden(perUnit uint32, unit string, multiplier uint32) (*Limit, error) {
	u, ok := units[strings.ToLower(unit)]
	if !ok {
		return nil, fmt.Errorf("unit %s; allowed: second, minute, hour, day, month, year", strings.ToUpper(unit))
	}
	multiplier = max(multiplier, 1)
	if int64(multiplier) > math.MaxInt64/int64(u.length) {
		return nil, fmt.Errorf("unit_multiplier %d is too large", multiplier)
	}
	o := *l
	o.Unit, o.PerUnit, o.Multiplier, o.Window = u.name, int(perUnit), multiplier, u.length*time.Duration(multiplier)
	o.Algorithm = algorithm(l.AlgorithmName).build(o.PerUnit, 0, o.Window)
	if perUnit == 0 {
		o.AlgorithmName, o.Algorithm = string(fixedWindow), algorithms.FixedWindow{Window: o.Window}
		return &o, nil
	}
	if err := (limiter.Rule{Name: l.Rule, Algorithm: o.Algorithm}).Validate(); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "ratelimit: "))
	}
	return &o, nil
}
