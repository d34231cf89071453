package rls

import (
	"errors"
	"fmt"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// FromFile returns a Server answering for the Envoy stacks of the
// library's rules file l (the stacks with a domain: see docs/config.md
// and docs/envoy.md), on l's limiter, which the file's HTTP and gRPC
// stacks share: a rule in an Envoy and an HTTP stack keeps one count.
// Each request is decided on the rules in force when it arrives, through
// l's reloads (Limits.Reload, Limits.Watch); a domain no stack names is
// not limited. Close l once serving stopped: it gives back the units of
// leased rules.
func FromFile(l *config.Limits, opts Options) (*Server, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil limits", ratelimit.ErrConfig)
	}
	return newServer(func() rules { return fileRules{l.Envoy()} }, opts)
}

// fileRules are the Envoy stacks of the file's version in force.
type fileRules struct{ e *config.Envoy }

func (f fileRules) limiter() *limiter.Limiter { return f.e.Limiter() }

func (f fileRules) domain(name string) domain { return fileDomain{f.e, name} }

// fileDomain is one domain of the file: the stack that names it, if any.
type fileDomain struct {
	e    *config.Envoy
	name string
}

// limitOf is the limit of the rule whose key reads exactly d's entry
// keys, in order, or nil, counted by the identity of d's values. The file
// has no override limit: a limit override on a descriptor no rule
// matches leaves it unlimited.
func (f fileDomain) limitOf(d *ratelimitv3.RateLimitDescriptor) (*envoy.Limit, string, algorithms.Algorithm, error) {
	keys := make([]string, len(d.GetEntries()))
	values := make([]string, len(keys))
	for i, e := range d.GetEntries() {
		keys[i], values[i] = e.GetKey(), e.GetValue()
	}
	c, r, err := f.e.Descriptor(f.name, keys, values)
	if err != nil {
		var m interface{ Missing() string } // what the values lack, never a value
		if errors.As(err, &m) {
			return nil, "", nil, errors.New("no " + m.Missing())
		}
		return nil, "", nil, err
	}
	if c.Rule == "" {
		return nil, "", nil, nil
	}
	alg := r.Algorithm
	if c.Plan != nil {
		alg = c.Plan
	}
	return ruleLimit(r, alg), c.Identity, c.Plan, nil
}

// ruleLimit is the limit a descriptor matched to rule r reports, counted
// by alg (r's algorithm, or the plan the descriptor's values chose): its
// name is the rule's; its requests_per_unit alg's limit or rate, over
// alg's window or period in the largest unit that divides it (no unit,
// UNKNOWN in a response, for a window that is not whole seconds); and
// duration_until_reset derived from alg as for a rate_limit that names
// it (see untilReset). It replaces no limit.
func ruleLimit(r limiter.Rule, alg algorithms.Algorithm) *envoy.Limit {
	l := &envoy.Limit{Name: r.Name, Rule: r.Name, Algorithm: alg, Lease: r.Lease, Shadow: r.Shadow}
	switch a := alg.(type) {
	case algorithms.FixedWindow: // not anchored: the file refuses those on Envoy stacks
		l.AlgorithmName, l.PerUnit, l.Window = "fixed_window", a.Limit, a.Window
	case algorithms.SlidingWindow:
		l.AlgorithmName, l.PerUnit, l.Window = "sliding_window", a.Limit, a.Window
	case algorithms.SlidingLog:
		l.AlgorithmName, l.PerUnit, l.Window = "sliding_log", a.Limit, a.Window
	case algorithms.TokenBucket:
		l.AlgorithmName, l.PerUnit, l.Window = "token_bucket", a.Rate, a.Period
	case algorithms.LeakyBucket:
		l.AlgorithmName, l.PerUnit, l.Window = "leaky_bucket", a.Rate, a.Period
	case algorithms.GCRA:
		l.AlgorithmName, l.PerUnit, l.Window = "gcra", a.Rate, a.Period
	}
	l.Unit, l.Multiplier = "", 1 // a window no unit divides
	if name, multiplier, ok := envoy.UnitOf(l.Window); ok {
		l.Unit, l.Multiplier = name, multiplier
	}
	return l
}
