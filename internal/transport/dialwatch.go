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
// failures that its connection pool's dials meet. go-redis dials in the
// background, with that client's dialer and hooks (not those of the store's
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

// epoch is what calls in flight wait on: its expiries end, with cause
// set first, at the next failed dial.
type epoch struct {
	expiries
	cause *fault.DialError
}

// WatchDials adds a DialWatch to c's hooks. It sees every dial of c's
// connection pool, which the store's calls share with the application's.
func WatchDials(c *redis.Client) *DialWatch {
	w := &DialWatch{}
	w.newEpoch()
	c.AddHook(w)
	return w
}

// newEpoch starts a new epoch and returns the one it replaces.
func (w *DialWatch) newEpoch() *epoch { return w.epoch.Swap(&epoch{}) }

// DialHook records each dial's outcome. A dial that gave up because its own
// context ended (a caller's deadline, the connection pool's dial timeout)
// is no news of the server.
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
			old := w.newEpoch()
			old.cause = de
			old.end()
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
	Ctx   context.Context
	epoch *epoch // nil without a watch
}

// unwatched ends the calls of clients without a watch: at their deadline
// only.
var unwatched expiries

// Bind returns ctx with deadline, ended as well by the next failed dial
// (see callCtx). w may be nil (a client not watched): then only the
// deadline applies.
func (w *DialWatch) Bind(ctx context.Context, deadline time.Time) Bound {
	if w == nil {
		return Bound{Ctx: bind(ctx, deadline, &unwatched)}
	}
	e := w.epoch.Load()
	return Bound{Ctx: bind(ctx, deadline, &e.expiries), epoch: e}
}

// Ended returns err, the error of the call made with b, or the failed dial
// that ended the call.
func (b Bound) Ended(err error) error {
	if b.epoch != nil && errors.Is(err, context.Canceled) && b.epoch.failed() {
		return b.epoch.cause
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
