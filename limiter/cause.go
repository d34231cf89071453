package limiter

import (
	"context"
	"errors"
	"net"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
)

// Cause classifies a backend failure (an error wrapping ErrBackend) for
// metrics and logs, without the caller knowing the store's client.
type Cause string

// The causes CauseOf tells apart.
const (
	// CauseDown: skipped while the store is marked down (ErrUnavailable).
	CauseDown Cause = "unavailable"
	// CauseTimeout: the store did not answer within its timeout.
	CauseTimeout Cause = "timeout"
	// CauseRefused: nothing to talk to (a failed dial: connection refused,
	// no route, an unknown host).
	CauseRefused Cause = "refused"
	// CauseReply: the store answered with an error (Redis's ERR,
	// NOSCRIPT that could not be mended, OOM, READONLY...).
	CauseReply Cause = "reply"
	// CauseNetwork: an established connection was lost or broke.
	CauseNetwork Cause = "network"
	// CauseOther: any other failure.
	CauseOther Cause = "other"
)

// CauseOf classifies err, a failure Decide, Settle or an operator method
// returned; "" when err is nil or not a backend failure (an invalid
// check, or the caller's context ending).
func CauseOf(err error) Cause {
	var reply interface{ RedisError() }
	var netErr net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrUnavailable):
		return CauseDown
	case !errors.Is(err, ErrBackend):
		return ""
	case fault.DialFailed(err):
		return CauseRefused
	case errors.Is(err, context.DeadlineExceeded):
		return CauseTimeout
	case errors.As(err, &reply):
		return CauseReply
	case errors.As(err, &netErr) || fault.Weak(err):
		return CauseNetwork
	}
	return CauseOther
}
