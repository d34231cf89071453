package client

import (
	"errors"
	"fmt"
	"time"
)

// ErrWaitTooLong is wrapped by the error of a request that a Transport did
// not send: its host is known to refuse requests until past MaxWait or
// the request's deadline. Clients that drive a Pacer wrap it as well
// (package grpclimit's Client does).
var ErrWaitTooLong = errors.New("ratelimit: the host's wait is too long")

// tooLong is the error of a request held for wait by addr, past maxWait
// or, when byContext, the request's deadline.
func tooLong(addr string, wait, maxWait time.Duration, byContext bool) error {
	wait = wait.Round(time.Millisecond)
	if byContext {
		return fmt.Errorf("%w: %s takes no request for %v, past the request's deadline", ErrWaitTooLong, addr, wait)
	}
	return fmt.Errorf("%w: %s takes no request for %v, more than MaxWait (%v)", ErrWaitTooLong, addr, wait, maxWait)
}
