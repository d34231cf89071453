package transport

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Deferred sends a store's commands through go-redis's Deferred
// AutoPipeliner (the client's AsyncAutoPipeline, behind the AutoPipeliner
// the store was given): each call is submitted to the shared pipeline and
// waits for its reply only until its context's deadline. The blocking face
// the store is usually given waits for the reply whatever the context
// says, so the store would need a goroutine per call to return at its
// timeout; this way it needs none. A call that gives up at its deadline
// stays in its batch and may still run, as after any lost reply; it is
// never sent again. It is a coalescer's link: what the coalescer batched
// goes out as a plain pipeline on the same client (see all).
type Deferred struct {
	*redis.AutoPipeliner // the Deferred face
}

// DeferredFace returns the Deferred face of ap's client, or nil when the
// client will not build one (it is closed).
func DeferredFace(ap *redis.AutoPipeliner) *Deferred {
	d, err := ap.AsyncAutoPipeline()
	if err != nil {
		return nil
	}
	return &Deferred{d}
}

// Process submits cmd and waits for its reply within ctx. On a context
// error cmd must not be read: its batch may still be filling it in.
func (d *Deferred) Process(ctx context.Context, cmd redis.Cmder) error {
	return d.Submit(ctx, cmd).WaitContext(ctx)
}

// ProcessAt sends cmd, a command without keys (FUNCTION LOAD), to the
// server of key, and waits for its reply only until ctx's deadline. The
// engine would send it to whichever server the client picks for a command
// without keys (on a cluster, one master in turn, not the one whose keys
// need it); the client's Watch on key, the one way through an
// AutoPipeliner to a server named by a key, runs it there on a connection
// of its own (WATCH key, cmd, UNWATCH). On a context error cmd must not be
// read: it may still run.
func (d *Deferred) ProcessAt(ctx context.Context, key string, cmd redis.Cmder) error {
	return untilDone(ctx, func(ctx context.Context) error {
		return d.Watch(ctx, func(tx *redis.Tx) error { return tx.Process(ctx, cmd) }, key)
	})
}

// all sends cmds as one pipeline on the AutoPipeliner's client
// (AutoPipeliner.Pipeline): they are a batch already, which its engine
// would only queue again. The pipeline waits for its replies up to the
// client's own timeouts (its ReadTimeout, unless ContextTimeoutEnabled),
// holding the coalescer's slot; the calls in it return at their deadline
// all the same.
func (d *Deferred) all(ctx context.Context, cmds []redis.Cmder) {
	pipelined(ctx, d.Pipeline(), cmds)
}
