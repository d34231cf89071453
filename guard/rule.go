package guard

import (
	"fmt"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Rule is one limit of a door, for requests of type R: the limiter's rule
// (its name, algorithm, blocks, lease and shadow mark), embedded, and the
// functions that read it from a request. middleware.Rule is
// Rule[*http.Request]; grpclimit.Rule is Rule[*grpclimit.Call].
type Rule[R any] struct {
	limiter.Rule
	// Identity extracts the identity the rule limits (a key function of
	// package keyfunc, for HTTP). An empty identity, or an error, is none:
	// see Optional. An error wrapping ratelimit.ErrConfig says the server
	// is misconfigured (a route key where nothing sets routes), not that
	// the client sent too little.
	Identity func(R) (string, error)
	// AltIdentity supplies the identity when Identity finds none (count
	// requests without an API key by client IP, say). The two share the
	// rule's counts by value: when a client chooses Identity's value (a
	// form field, a raw header) and it could equal an AltIdentity value
	// (an IP), make them differ (keyfunc.Join with a constant, or a hashed
	// key function), or a client could spend another's count.
	AltIdentity func(R) (string, error)
	// Optional makes a request for which Identity and AltIdentity find
	// none sit this rule out. By default it is refused as NoIdentity.
	Optional bool
	// Plan, when set, chooses the limit per request (a customer's plan);
	// nil means the rule's Algorithm. An invalid one is Misconfigured.
	Plan func(R) algorithms.Algorithm
	// Cost is the request's weight for this rule; nil means 1. 0 checks
	// without consuming; negative is BadCost.
	Cost func(R) int
	// Skip, when it returns true, leaves the rule out for that request.
	Skip func(R) bool
	// Settle, when set, is the request's final cost once it has ended: the
	// difference from Cost is given back or charged (see
	// limiter.Limiter.Settle). Negative means 0. A concurrency limit's slot
	// is released whatever Settle says.
	Settle func(R, End) int
}

// End is how a request ended, for Rule.Settle.
type End struct {
	// Status is the door's status: the HTTP status (500 when the handler
	// panicked), or the gRPC code (codes.Unknown when it panicked).
	Status int
	// Written is the bytes of the response body (HTTP; 0 for gRPC).
	Written int64
}

// Limits returns the limiter's rules behind rules, in their order: a
// limiter.Limiter built on them, on the same store and with the same
// limiter options, decides and reports exactly the state a door of rules
// decides on.
func Limits[R any](rules []Rule[R]) []limiter.Rule {
	out := make([]limiter.Rule, len(rules))
	for i := range rules {
		out[i] = rules[i].Rule
	}
	return out
}

// validate reports what a door cannot run of r before the
// limiter judges its limit.
func (r *Rule[R]) validate() error {
	if r.Identity == nil {
		return fmt.Errorf("%w: rule %q: no Identity function", ratelimit.ErrConfig, r.Name)
	}
	return r.Rule.Validate()
}
