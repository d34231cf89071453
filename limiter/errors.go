package limiter

import (
	"errors"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/breaker"
)

var (
	// ErrCheck is wrapped when a Check cannot be decided: an unknown rule,
	// an empty identity, a negative cost or the same key twice.
	ErrCheck = errors.New("ratelimit: invalid check")
	// ErrBackend is wrapped by every Redis failure, timeouts included:
	// the store's own timeout, not the caller's deadline passing first,
	// which ends a call with its context's error (see Limiter.Decide).
	ErrBackend = errors.New("ratelimit: backend error")
	// ErrUnavailable is wrapped (with ErrBackend) by the error of a
	// decision that did not go to Redis because Redis is marked down:
	// recent calls failed, and the retry interval has not passed (see
	// WithRetryInterval). Such decisions fail at once instead of waiting
	// for the timeout; the transitions are logged, not each decision.
	ErrUnavailable = breaker.ErrUnavailable
)

// unprefixed is err for wrapping in an error of this package, which says
// "ratelimit: " already: err with its text's own leading "ratelimit: "
// left out (an invalid algorithm, a store marked down), so that a message
// says it once. errors.Is and errors.As see err itself.
func unprefixed(err error) error {
	if msg, ok := strings.CutPrefix(err.Error(), "ratelimit: "); ok {
		return &inner{msg: msg, err: err}
	}
	return err
}

// inner is an error read without its prefix.
type inner struct {
	msg string
	err error
}

func (e *inner) Error() string { return e.msg }
func (e *inner) Unwrap() error { return e.err }
