package fault_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
)

func TestRefundUnsent(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	dial := &fault.DialError{Err: refused}
	for _, c := range []struct {
		name string
		err  error
		i    int
		want bool
	}{
		{"dial", refused, 0, true},
		{"dial error", dial, 0, true},
		{"wrapped dial", fmt.Errorf("redis: %w", dial), 0, true},
		{"one round trip", errors.Join(refused), 0, true},
		{"timeout caused by a dial", fault.WithDialCause(dial, context.DeadlineExceeded), 0, false},
		{"timeout", context.DeadlineExceeded, 0, false},
		{"lost", io.ErrUnexpectedEOF, 0, false},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, 0, false},
		{"several round trips", errors.Join(refused, io.EOF), 0, false},
		{"refunds: its own dial", &fault.Refunds{Errs: []error{nil, refused}}, 1, true},
		{"refunds: its round trip succeeded", &fault.Refunds{Errs: []error{nil, refused}}, 0, false},
		{"refunds: its round trip timed out", &fault.Refunds{Errs: []error{context.DeadlineExceeded, refused}}, 0, false},
		{"refunds: out of range", &fault.Refunds{Errs: []error{refused}}, 1, false},
		{"refunds, wrapped", fmt.Errorf("x: %w", &fault.Refunds{Errs: []error{refused}}), 0, true},
	} {
		if got := fault.RefundUnsent(c.err, c.i); got != c.want {
			t.Errorf("%s: RefundUnsent(%v, %d) = %v, want %v", c.name, c.err, c.i, got, c.want)
		}
	}
	if fault.Unsent(&fault.Refunds{Errs: []error{refused}}) {
		t.Error("Unsent of a Refunds error: which round trip failed is for RefundUnsent to read")
	}
	re := &fault.Refunds{Errs: []error{refused, nil, refused, io.EOF}}
	if !errors.Is(re, io.EOF) || !fault.DialFailed(re) || re.Error() != refused.Error()+"\n"+io.EOF.Error() {
		t.Errorf("Refunds reads as %q", re.Error())
	}
}

// A call's failure is its caller's end only once the caller gave up, and
// only when it is a cancellation or a timeout: before the caller's
// deadline a timeout is the server's, and past it a refused dial is still
// the server's.
func TestCallerEnded(t *testing.T) {
	alive := context.Background()
	past, cancel := context.WithDeadline(alive, time.Now().Add(-time.Second))
	defer cancel()
	cancelled, stop := context.WithCancel(alive)
	stop()
	timeout := &net.OpError{Op: "read", Err: timeoutError{}}
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"alive, a timeout", alive, timeout, false},
		{"alive, deadline exceeded", alive, context.DeadlineExceeded, false},
		{"past its deadline, a socket's timeout", past, timeout, true},
		{"past its deadline, deadline exceeded", past, fmt.Errorf("wrapped: %w", context.DeadlineExceeded), true},
		{"past its deadline, a refused dial", past, refused, false},
		{"cancelled, canceled", cancelled, context.Canceled, true},
		{"cancelled, a reply error", cancelled, errors.New("ERR"), false},
	} {
		if got := fault.CallerEnded(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: CallerEnded %v, want %v", tc.name, got, tc.want)
		}
	}
}

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// A decision's failure leaves unknown whether it ran when its reply may
// have been lost: a timeout, a connection lost in use, a caller gone
// while it was in flight; not a failed dial, a refusal that proves it did
// not run, or an error reply.
func TestMayHaveRun(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"timeout", context.DeadlineExceeded, true},
		{"network timeout", &net.OpError{Op: "read", Err: &timeoutError{}}, true},
		{"lost", io.ErrUnexpectedEOF, true},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"canceled", fmt.Errorf("redis: %w", context.Canceled), true},
		{"timeout caused by a dial", fault.WithDialCause(&fault.DialError{Err: refused}, context.DeadlineExceeded), true},
		{"dial", refused, false},
		{"refused, not run", fault.NotRun(errors.New("READONLY You can't write against a read only replica.")), false},
		{"error reply", errors.New("ERR unknown command"), false},
	} {
		if got := fault.MayHaveRun(c.err); got != c.want {
			t.Errorf("%s: MayHaveRun(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
