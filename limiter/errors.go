package limiter

import (
	"errors"
	"strings"
)

var (
	// ErrCheck is wrapped when a Check cannot be decided: an unknown rule,
	// an empty identity, a negative cost or the same key twice.
	ErrCheck = errors.New("ratelimit: invalid check")
	// ErrBackend is wrapped by every Redis failure, timeouts included.
	ErrBackend = errors.New("ratelimit: backend error")
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
