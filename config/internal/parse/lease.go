package parse

import (
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// leasable are the algorithm fields of the rules a lease is allowed on:
// those whose units are interchangeable (see "Leases" in package
// limiter). TestLeasableIsTheLimiters holds it to the limiter's.
var leasable = []string{"fixed_window", "sliding_window", "token_bucket", "leaky_bucket", "gcra"}

// leaseAllowed is what a problem with the lease of lr, a rule the limiter
// refuses, says is allowed: found by asking the limiter again without
// what each allowance rules out; "" when none of them is the cause (a
// lease out of range, which the limiter's complaint bounds itself).
func leaseAllowed(lr limiter.Rule) string {
	alone := limiter.Rule{Name: lr.Name, Algorithm: lr.Algorithm, Lease: time.Second}
	unblocked, unshadowed := lr, lr
	unblocked.Blockable, unblocked.Penalty = false, 0
	unshadowed.Shadow = false
	switch {
	case !accepts(alone):
		return "a lease only on " + orList(leasable)
	case (lr.Blockable || lr.Penalty > 0) && accepts(unblocked):
		return "no lease on a rule with penalty or blockable (remove them or lease)"
	case lr.Shadow && accepts(unshadowed):
		return "no lease on a shadow rule (remove shadow or lease)"
	}
	return ""
}

// accepts reports whether the limiter accepts lr.
func accepts(lr limiter.Rule) bool {
	return lr.Validate() == nil
}

// orList is words as a sentence lists them: "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	last := len(words) - 1
	return strings.Join(words[:last], ", ") + " or " + words[last]
}
