package config

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Status reports, without consuming anything, what the rule named rule
// keeps for a client: its use, what is left, and whether it is blocked.
// identity is the value the operator knows, read as the rule's key reads
// a request (an address masked, a header's value hashed): an API key as
// the client sends it, an address, a user. With plan, the name of one
// of the rule's plans values, it reports against that plan's algorithm
// instead of the rule's. It reaches the state of the rules in force, as
// the file built them: what the store keeps, in which a leased rule's
// units that instances hold count as used.
func (l *Limits) Status(ctx context.Context, rule, identity, plan string) (limiter.Decision, error) {
	g, r, id, err := l.operand(rule, identity)
	if err != nil {
		return limiter.Decision{}, err
	}
	c := limiter.Check{Rule: rule, Identity: id}
	if plan != "" {
		if c.Plan = planNamed(r, plan); c.Plan == nil {
			return limiter.Decision{}, fmt.Errorf("%w: rule %q has no plan %q (its plans: %s)", limiter.ErrCheck, rule, plan, planNames(r))
		}
	}
	return g.Lim.Decide(ctx, c)
}

// Reset forgets what the rule named rule keeps for a client (identity as
// for Status) under its algorithm and every one of its plans, and its
// block: the client starts afresh. When there was nothing to forget it
// returns an error wrapping limiter.ErrNotFound.
func (l *Limits) Reset(ctx context.Context, rule, identity string) error {
	g, r, id, err := l.operand(rule, identity)
	if err != nil {
		return err
	}
	var plans []algorithms.Algorithm
	if r.Plans != nil {
		for _, name := range slices.Sorted(maps.Keys(r.Plans.Values)) {
			plans = append(plans, r.Plans.Values[name])
		}
	}
	return g.Lim.Reset(ctx, rule, id, plans...)
}

// Block refuses a client (identity as for Status) every request the rule
// named rule decides, for d, on every instance: the rule must be
// blockable, or have a penalty (see limiter.Limiter.Block).
func (l *Limits) Block(ctx context.Context, rule, identity string, d time.Duration) error {
	g, _, id, err := l.operand(rule, identity)
	if err != nil {
		return err
	}
	return g.Lim.Block(ctx, rule, id, d)
}

// Unblock lifts a client's block (identity as for Status) on the rule
// named rule, whether Block or a penalty set it; an error wrapping
// limiter.ErrNotFound when it was not blocked.
func (l *Limits) Unblock(ctx context.Context, rule, identity string) error {
	g, _, id, err := l.operand(rule, identity)
	if err != nil {
		return err
	}
	return g.Lim.Unblock(ctx, rule, id)
}

// operand is the generation in force, the rule of it an operator's call
// names, and the identity under which that rule keeps the client the
// operator names.
func (l *Limits) operand(name, identity string) (*generation, *parse.Rule, string, error) {
	g := l.cur.Load()
	r := g.ruleInForce(name)
	if r == nil {
		known := "none"
		if g.Lim != nil {
			names := make([]string, 0, len(g.Lim.Rules()))
			for _, lr := range g.Lim.Rules() {
				names = append(names, lr.Name)
			}
			known = strings.Join(names, ", ")
		}
		return nil, nil, "", fmt.Errorf("%w: no rule %q in force in %s (the rules its stacks use: %s)", limiter.ErrCheck, name, l.path, known)
	}
	if identity == "" {
		return nil, nil, "", fmt.Errorf("%w: rule %q: no identity given", limiter.ErrCheck, name)
	}
	id, err := g.Identity(r, identity)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: rule %q: %w", limiter.ErrCheck, name, err)
	}
	return g, r, id, nil
}

// ruleInForce is the rule of the file named name that a stack uses (only
// those keep state), or nil.
func (g *generation) ruleInForce(name string) *parse.Rule {
	for _, st := range g.File.Stacks {
		if slices.Contains(st.Rules, name) {
			for _, r := range g.File.Rules {
				if r.Name == name {
					return r
				}
			}
		}
	}
	return nil
}

// planNamed is the algorithm of r's plan named name, or nil.
func planNamed(r *parse.Rule, name string) algorithms.Algorithm {
	if r.Plans == nil {
		return nil
	}
	return r.Plans.Values[name]
}

// planNames lists r's plans, for an error.
func planNames(r *parse.Rule) string {
	if r.Plans == nil {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(r.Plans.Values)), ", ")
}
