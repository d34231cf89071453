package transport

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
)

// DialWatch is a dial hook on the client a store was given, for the
// failures that its pool's dials meet. go-redis dials in the background,
// with that client's dialer and hooks (not those of the store's
// timeout-wrapped clone), redialling a refused address until the call's
// deadline: the call sees only "context deadline exceeded". The watch keeps
// the latest dial's failure, the cause of such a timeout (see Cause),
// and when a dial fails it ends at once the store's calls in flight (see
// bind): they would wait for a connection until their deadline, and
// nothing listens.
type DialWatch struct {
	failed atomic.Pointer[fault.DialError] // the latest dial's failure; nil once a dial succeeded since
	epoch  atomic.Pointer[epoch]           // ended by the next failed dial
}

// epoch is what calls in flight wait on: its context ends, with the
// fault.DialError as its cause, at the next failed dial.
type epoch struct {
	ctx context.Context
	end context.CancelCauseFunc
}

// WatchDials adds a DialWatch to c's hooks. It sees every dial of c's pool,
// which the store's calls share with the application's.
func WatchDials(c *redis.Client) *DialWatch {
	w := &DialWatch{}
	w.newEpoch()
	c.AddHook(w)
	return w
}

// newEpoch starts a new epoch and returns the one it replaces.
func (w *DialWatch) newEpoch() *epoch {
	ctx, end := context.WithCancelCause(context.Background())
	return w.epoch.Swap(&epoch{ctx, end})
}

// DialHook records each dial's outcome. A dial that gave up because its own
// context ended (a caller's deadline, the pool's dial timeout) is no news
// of the server.
func (w *DialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		switch {
		case err == nil:
			if w.failed.Load() != nil {
				w.failed.Store(nil)
			}
		case ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
			de := &fault.DialError{Err: err}
			w.failed.Store(de)
			w.newEpoch().end(de)
		}
		return conn, err
	}
}

// ProcessHook leaves commands as they are.
func (w *DialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook leaves pipelines as they are.
func (w *DialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Bound is a call's context from Bind.
type Bound struct {
	Ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool // nil without a watch
	epoch  *epoch
}

// Bind returns ctx with deadline, ended as well by the next failed dial.
// w may be nil (a client not watched): then only the deadline applies.
func (w *DialWatch) Bind(ctx context.Context, deadline time.Time) Bound {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	if w == nil {
		return Bound{Ctx: ctx, cancel: cancel}
	}
	e := w.epoch.Load()
	return Bound{Ctx: ctx, cancel: cancel, stop: context.AfterFunc(e.ctx, cancel), epoch: e}
}

// Release frees the context.
func (b Bound) Release() {
	if b.stop != nil {
		b.stop()
	}
	if b.cancel != nil {
		b.cancel()
	}
}

// Ended returns err, the error of the call made with b, or the failed dial
// that ended the call.
func (b Bound) Ended(err error) error {
	if b.epoch != nil && errors.Is(err, context.Canceled) && b.epoch.ctx.Err() != nil {
		return context.Cause(b.epoch.ctx)
	}
	return err
}

// Cause returns err, a store call's failure, with the latest dial's
// failure as its cause when err is a timeout and no dial has succeeded
// since: the call waited for a connection that could not be made. The
// result is still context.DeadlineExceeded to errors.Is.
func (w *DialWatch) Cause(err error) error {
	if w == nil || err == nil || !fault.IsTimeout(err) || fault.DialFailed(err) {
		return err
	}
	if de := w.failed.Load(); de != nil {
		return fault.WithDialCause(de, err)
	}
	return err
}

// Carry returns ctx carrying deadline for a Coalescer (see WithDeadline),
// as a Bound with nothing to release.
func Carry(ctx context.Context, deadline time.Time) Bound {
	return Bound{Ctx: WithDeadline(ctx, deadline)}
}
