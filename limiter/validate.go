package limiter

import (
	"fmt"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/keypart"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/lease"
)

// Validate reports what New would refuse of r alone, without a store: its
// name, algorithm, penalty, lease and shadow mark, in an error wrapping
// ratelimit.ErrConfig that names the rule and says what is allowed.
func (r Rule) Validate() error {
	if !keypart.ValidRuleName(r.Name) {
		return fmt.Errorf("%w: rule name %q must be 1 to 64 bytes of [A-Za-z0-9._-]", ratelimit.ErrConfig, r.Name)
	}
	_, err := r.check()
	return err
}

// check validates r, named validly, and returns its algorithm as the
// limiter derives it.
func (r Rule) check() (*algo, error) {
	a := newAlgo(r.Algorithm)
	if a.err != nil {
		return nil, fmt.Errorf("%w: rule %q: %w", ratelimit.ErrConfig, r.Name, a.err)
	}
	if r.Penalty < 0 || r.Penalty > exact.MaxDuration {
		return nil, fmt.Errorf("%w: rule %q: penalty %v outside 0 to %v", ratelimit.ErrConfig, r.Name, r.Penalty, exact.MaxDuration)
	}
	if why := lease.Invalid(r.Lease, r.Blockable || r.Penalty > 0, r.Algorithm.String(), &a.lease); why != "" {
		return nil, fmt.Errorf("%w: rule %q: %s", ratelimit.ErrConfig, r.Name, why)
	}
	if r.Shadow && r.Lease > 0 {
		return nil, fmt.Errorf("%w: rule %q: a shadow rule cannot be leased (a lease spends units the rule may not consume)", ratelimit.ErrConfig, r.Name)
	}
	return a, nil
}
