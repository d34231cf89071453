package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refused is what a dial to a port nothing listens on fails with.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// A dial that fails ends the calls in flight at once with its error; a
// timeout while no dial has succeeded since carries it as its cause (and
// is still a timeout); a dial that gave up with its own context, or one
// that succeeded, is not held against Redis.
func TestDialWatch(t *testing.T) {
	w := &DialWatch{}
	w.newEpoch()
	dial := func(ctx context.Context, err error) {
		_, _ = w.DialHook(func(context.Context, string, string) (net.Conn, error) { return nil, err })(ctx, "tcp", "127.0.0.1:1")
	}
	inFlight := w.Bind(context.Background(), time.Now().Add(time.Hour))
	dial(context.Background(), refused)
	<-inFlight.Ctx.Done()
	if err := inFlight.Ended(context.Canceled); !errors.Is(err, syscall.ECONNREFUSED) || err.Error() != refused.Error() {
		t.Errorf("a call ended by the failed dial: %v", err)
	}

	later := w.Bind(context.Background(), time.Now().Add(time.Hour))
	if later.Ctx.Err() != nil {
		t.Fatal("a call made after the failed dial was ended by it")
	}
	err := w.Cause(context.DeadlineExceeded)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.ECONNREFUSED) || !strings.HasPrefix(err.Error(), refused.Error()) {
		t.Errorf("a timeout after the failed dial: %v", err)
	}
	if err := w.Cause(io.EOF); err != io.EOF {
		t.Errorf("EOF became %v", err)
	}

	gaveUp, cancel := context.WithCancel(context.Background())
	cancel()
	dial(gaveUp, &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled})
	if later.Ctx.Err() != nil {
		t.Error("a dial that gave up with its context ended the calls in flight")
	}
	dial(context.Background(), nil)
	if err := w.Cause(context.DeadlineExceeded); err != context.DeadlineExceeded {
		t.Errorf("a timeout after a successful dial: %v", err)
	}
}
