package limiter

import (
	"context"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Store keeps rate-limit state and decides stacks of checks atomically.
// RedisStore runs the Lua scripts; package memstore keeps state in process
// with the algorithms' Go models. Both give the same results for the same
// inputs.
type Store interface {
	// Decide checks every entry of checks and, only if all allow, consumes
	// their costs. It returns whether the stack was allowed, the instant it
	// was decided at, and one result per check in order, of which it fills
	// only the embedded algorithms.Result (the Limiter names the rules). A
	// zero now means the store's own clock (Redis TIME for Redis).
	Decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error)
}

// StoreCheck is one rule's part of a stacked decision, ready for a store.
type StoreCheck struct {
	// Key names the state; the Limiter builds it (see the package doc).
	Key string
	// Algorithm is the rule's algorithm, already validated.
	Algorithm algorithms.Algorithm
	// Cost is the request's weight, >= 0.
	Cost int
	// signature identifies the algorithm's parameters, for the deny cache.
	signature string
}
