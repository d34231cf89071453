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
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// IsTimeout reports whether err is a deadline or a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// GaveUp reports whether the caller of ctx gave up: ctx is done, or its
// deadline has passed (a socket deadline set from it can fail a call with
// a network timeout before the context's own timer ends it). A call's
// failure then says nothing of the server.
func GaveUp(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// CallerEnded reports whether err, the failure of a call made for ctx, is
// its caller's end rather than the server's: the caller gave up (GaveUp)
// and err is a cancellation or a timeout (past ctx's deadline, a socket's
// timeout is that deadline's). A server's own timeout leaves ctx alive.
func CallerEnded(ctx context.Context, err error) bool {
	return GaveUp(ctx) && (errors.Is(err, context.Canceled) || IsTimeout(err))
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

// Unsent reports whether err, the failure of a store call, proves that the
// call never reached the server, so that sending it again cannot run it
// twice: the call's own dial failed, or a failed dial ended it while it
// waited for a connection (go-redis returns a context's end only before it
// writes a command, and never re-sends a script it wrote). A timeout whose
// cause is a failed dial (WithDialCause) proves nothing: the call may have
// been written on a connection already open, whose reply was lost while
// another connection's dial failed. Nor does an error of several round
// trips (see Refunds): each may have run. A refusal the server answered
// that proves the call did not run (see NotRun) counts as unsent.
func Unsent(err error) bool {
	var nr *notRun
	return (DialFailed(err) && !IsTimeout(err) || errors.As(err, &nr)) && !several(err)
}

// MayHaveRun reports whether err, a store's failure to decide, leaves
// unknown whether the decision ran: its reply was lost (a timeout, a
// connection lost in use, a caller gone while it was in flight). A failed
// dial, a refusal proving that it did not run, an error reply and a
// breaker that did not send it say that it did not.
func MayHaveRun(err error) bool {
	return err != nil && !Unsent(err) && (IsTimeout(err) || Weak(err) || errors.Is(err, context.Canceled))
}

// notRun is a failure that the server answered with a refusal proving the
// call did not run (see NotRun).
type notRun struct{ error }

func (e *notRun) Unwrap() error { return e.error }

// NotRun marks err, the server's refusal of a call that proves it did not
// run (READONLY from a replica, LOADING from a server loading its
// dataset, and the others internal/script sends again), as one that can
// be sent again without running twice (see Unsent); nil stays nil. The
// error reads and unwraps as err.
func NotRun(err error) error {
	if err == nil {
		return nil
	}
	return &notRun{err}
}

// several reports whether err joins errors (as errors.Join and a
// fmt.Errorf of several %w do) other than a dial and its timeout: the
// failures of several calls, of which some may have run.
func several(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *Refunds:
		return true
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		return len(errs) > 1 || (len(errs) == 1 && several(errs[0]))
	}
	return several(errors.Unwrap(err))
}

// Refunds is the failure of a store's Refund whose refunds went out in
// several round trips (one per shard), some of which failed: Errs[i] is
// refunds[i]'s failure, nil where its round trip succeeded. It reads, and
// unwraps, as the distinct failures it holds.
type Refunds struct{ Errs []error }

func (e *Refunds) Error() string { return errors.Join(e.Unwrap()...).Error() }

// Unwrap returns the distinct failures.
func (e *Refunds) Unwrap() []error {
	var out []error
	for _, err := range e.Errs {
		if err != nil && !slices.Contains(out, err) {
			out = append(out, err)
		}
	}
	return out
}

// RefundUnsent reports whether refund i of a store's failed Refund surely
// never ran (see Unsent): its own round trip's failure says so, for a
// Refunds error, or else the whole call's.
func RefundUnsent(err error, i int) bool {
	var re *Refunds
	if errors.As(err, &re) {
		return i < len(re.Errs) && re.Errs[i] != nil && Unsent(re.Errs[i])
	}
	return Unsent(err)
}
