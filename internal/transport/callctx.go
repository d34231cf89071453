package transport

import (
	"context"
	"time"
)

// callCtx is the context of one call to Redis: its caller's values, its
// deadline, and a Done channel shared by every call whose deadline falls
// in the same millisecond (see expiries), closed as well when a dial
// fails (see DialWatch): one allocation per call, where a context with a
// deadline and a dial watch cost seven (the context, its timer, its Done
// channel, the watch's AfterFunc).
//
// Its caller's cancellation does not end a call in flight: the call ends at
// its deadline (the store's timeout at most, or the caller's own deadline
// if sooner) or at a failed dial. A call already written may have run, and
// ending it sooner would only hide its outcome.
type callCtx struct {
	context.Context // the caller's, for its values
	deadline        time.Time
	done            <-chan struct{}
	ends            *expiries // what closes done: ended means a failed dial
}

// closedChan is a Done channel already closed.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// bind returns the context of a call made with ctx, until deadline or
// the end of ends.
func bind(ctx context.Context, deadline time.Time, ends *expiries) *callCtx {
	return &callCtx{Context: ctx, deadline: deadline, done: ends.after(deadline), ends: ends}
}

// Deadline is the call's deadline.
func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Done is closed at the deadline or a failed dial.
func (c *callCtx) Done() <-chan struct{} { return c.done }

// Err is context.Canceled after a failed dial, context.DeadlineExceeded
// after the deadline, nil before either.
func (c *callCtx) Err() error {
	select {
	case <-c.done:
		if c.ends.failed() {
			return context.Canceled
		}
		return context.DeadlineExceeded
	default:
		return nil
	}
}
