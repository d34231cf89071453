package limiter

import "errors"

var (
	// ErrCheck is wrapped when a Check cannot be decided: an unknown rule,
	// an empty identity, a negative cost or the same key twice.
	ErrCheck = errors.New("ratelimit: invalid check")
	// ErrBackend is wrapped by every Redis failure, timeouts included.
	ErrBackend = errors.New("ratelimit: backend error")
)
