package limiter

import (
	"context"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// coalescer shares writes and reads between concurrent decisions on one
// *redis.Client. A call made while none is in flight goes straight to
// Redis, as without it: no added wait at low load. Calls made while one is
// in flight queue up; when it returns, they leave together as one
// pipeline, sent by the first of them, while the next calls queue behind.
// So under load each round trip carries every decision that arrived
// during the last one: fewer system calls and fewer reads per decision, on
// the client and on Redis.
//
// Each call keeps its own deadline: a call that times out while queued
// leaves the queue and was never sent; a call that times out while its
// pipeline is in flight returns at its deadline (its command may still run,
// as after any lost reply, and it is never sent again). The pipeline runs
// until the deadline of the call that sends it, on the store's client,
// whose socket reads and writes stop at the store's timeout; no goroutine
// is started per call. Commands are sent once: go-redis does not re-send a
// pipeline holding a command that refuses retries (every script call).
type coalescer struct {
	*redis.Client // everything but Process goes to the client as it is

	mu      sync.Mutex
	sending bool    // a call or a pipeline is in flight
	queue   []*call // calls waiting for the next pipeline
}

// call is a queued command.
type call struct {
	ctx  context.Context
	cmd  redis.Cmder
	done chan bool // true: this call sends the pipeline; closed: answered
}

func newCoalescer(c *redis.Client) *coalescer { return &coalescer{Client: c} }

// Process sends cmd alone when nothing is in flight, else with the calls
// that queue with it.
func (c *coalescer) Process(ctx context.Context, cmd redis.Cmder) error {
	c.mu.Lock()
	if !c.sending {
		c.sending = true
		c.mu.Unlock()
		err := c.Client.Process(ctx, cmd)
		c.next()
		return err
	}
	k := &call{ctx: ctx, cmd: cmd, done: make(chan bool, 1)}
	c.queue = append(c.queue, k)
	c.mu.Unlock()
	select {
	case lead, ok := <-k.done:
		if ok && lead {
			return c.send(k)
		}
		return cmd.Err()
	case <-ctx.Done():
		c.mu.Lock()
		i := slices.Index(c.queue, k)
		if i >= 0 {
			c.queue = slices.Delete(c.queue, i, i+1) // never sent
		}
		c.mu.Unlock()
		if i >= 0 {
			// The baton may have reached it meanwhile: pass it on.
			select {
			case lead := <-k.done:
				if lead {
					c.next()
				}
			default:
			}
		}
		// Else another call's pipeline took it: its command may still run.
		return ctx.Err()
	}
}

// next hands what queued to the first queued call, which sends it, or
// marks the coalescer idle.
func (c *coalescer) next() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.sending = false
		return
	}
	c.queue[0].done <- true
}

// send sends the queue, taken as the call k (its first) hands it the
// baton, as one pipeline within k's deadline, answers its calls, and hands
// on what queued meanwhile.
func (c *coalescer) send(k *call) error {
	c.mu.Lock()
	batch := c.queue
	c.queue = nil
	c.mu.Unlock()
	ctx := context.WithoutCancel(k.ctx) // one caller giving up must not cancel the others
	if deadline, ok := k.ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	if len(batch) == 1 {
		_ = c.Client.Process(ctx, batch[0].cmd)
	} else {
		pipe := c.Client.Pipeline()
		for _, b := range batch {
			_ = pipe.Process(ctx, b.cmd)
		}
		_, _ = pipe.Exec(ctx)
	}
	for _, b := range batch[1:] {
		close(b.done)
	}
	c.next()
	return k.cmd.Err()
}
