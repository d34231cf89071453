package limiter

import (
	"context"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Store keeps rate-limit state and decides stacks of checks atomically. The
// Redis store (RedisStore) runs the Lua scripts; package memstore keeps state
// in process with the algorithms' Go models. Both give the same results for
// the same inputs.
type Store interface {
	// Decide checks every entry of checks and, only if all allow, consumes
	// their costs; it fills results (whose Limit the caller has set) and
	// reports whether the stack was allowed. A zero now means the store's
	// own clock (Redis TIME for Redis).
	Decide(ctx context.Context, now time.Time, checks []StoreCheck, results []algorithms.Result) (bool, error)
}

// StoreCheck is one rule's part of a stacked decision, ready for a store.
type StoreCheck struct {
	// Key names the state; Limiter builds it (see the package doc).
	Key string
	// Algorithm is the rule's algorithm, already validated.
	Algorithm algorithms.Algorithm
	// Cost is the request's weight, >= 0.
	Cost int
}

// Local is implemented by stores that do no I/O, such as memstore: the
// Limiter sets no timeout on their calls (WithTimeout bounds I/O).
type Local interface {
	Store
	Local()
}
