// Package fault classifies the failures of a store's calls for the
// limiter's breaker: which say that the server is down (a failed dial),
// which one event fails every call in flight with while the server is up
// (a timeout, a connection lost in use), and which failures were one round
// trip shared by several decisions. The Redis store's transport marks its
// failures with these types; any other store's plain network errors are
// read the same way.
package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
)

// IsTimeout reports whether err is a deadline or a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// Weak reports a failure that one event fails every call in flight with
// while the server is up: a timeout (a pause, a slow command), or a
// connection lost in use (CLIENT KILL, an idle timeout, a restarted proxy).
// A failed dial, even one that the call waited for until its deadline, is
// not weak.
func Weak(err error) bool {
	return !DialFailed(err) && (IsTimeout(err) || connectionLost(err))
}

// DialFailed reports whether err is, or carries as its cause, a failed
// dial: nothing to talk to.
func DialFailed(err error) bool {
	var op *net.OpError
	var de *DialError
	return errors.As(err, &de) || (errors.As(err, &op) && op.Op == "dial")
}

// connectionLost reports whether err says an established connection was
// closed or broken.
func connectionLost(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || (errors.As(err, &op) && op.Op != "dial")
}

// DialError is the failure of a dial of a store's client: the cause of
// the failures it leads to (see WithDialCause).
type DialError struct{ Err error }

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// WithDialCause is err, a timeout, with the failed dial as its cause, and
// reads so: "dial tcp 127.0.0.1:6379: connect: connection refused (context
// deadline exceeded)". It is still context.DeadlineExceeded to errors.Is.
func WithDialCause(de *DialError, err error) error {
	return fmt.Errorf("%w (%w)", de, err)
}

// RoundTrip is one round trip to the server that carried several
// decisions (a coalesced pipeline): when it fails, the breaker counts it
// once.
type RoundTrip struct{ counted atomic.Bool }

// SharedFailure is the error of a decision that failed in a round trip
// shared with others; it reads as the error itself.
type SharedFailure struct {
	error
	Trip *RoundTrip
}

func (e *SharedFailure) Unwrap() error { return e.error }

// Shared is err, a decision's failure in trip, marked as shared.
func Shared(err error, trip *RoundTrip) error { return &SharedFailure{err, trip} }

// FirstOfRoundTrip reports whether err is the first failure of its round
// trip that the caller sees: always, for a decision that had its round
// trip to itself.
func FirstOfRoundTrip(err error) bool {
	var sf *SharedFailure
	return !errors.As(err, &sf) || sf.Trip.counted.CompareAndSwap(false, true)
}
