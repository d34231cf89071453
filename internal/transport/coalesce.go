// Package transport is how the Redis store reaches Redis: the Coalescer
// that shares round trips between concurrent decisions, its links to a
// *redis.Client and to go-redis's AutoPipeliner, deadlines shared per
// millisecond, the dial watch that ends calls when nothing listens, and
// the hash slots that Redis Cluster shards keys by.
package transport

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

// Coalescer shares writes and reads between concurrent decisions on one
// client (a *redis.Client, or go-redis's AutoPipeliner: see Link; a
// cluster's master or a ring's shard, see Nodes). A call made while fewer
// than its limit (maxInFlight, nodeInFlight) are in flight, with none
// queued, goes straight to Redis, as without it: no added wait at low
// load. Calls made
// while the limit is reached queue up; when one in flight returns, its
// caller's slot goes to a sender, which sends what queued as one pipeline,
// then what queued meanwhile, until the queue is empty. So under load each
// round trip carries every decision that arrived during the last one:
// fewer system calls and fewer reads per decision, on the client and on
// Redis. The decisions of a pipeline leave as one call of the batch
// function (script.MergeStacks), which spares Redis the work it does per
// call.
//
// Each call keeps its own deadline (see Deadline): a call that times out
// while queued leaves the queue and was never sent; a call that times out
// while its pipeline is in flight returns at its deadline (its command may
// still run, as after any lost reply, and it is never sent again). A
// sender runs on a goroutine of its own (at most its limit, not one per
// call) and sends each pipeline until the latest deadline of its calls.
// Commands are sent once: go-redis does not re-send a command that refuses
// retries (every script call). The store leaves its timeout to the
// Coalescer, so that a queued call needs no timer of its own (see
// expiries).
type Coalescer struct {
	Link    // everything but Process goes to the client as it is
	timeout time.Duration
	expiry  expiries
	dials   *DialWatch // nil: calls wait for a connection until their deadline
	slots   bool       // a cluster master's: its batches span hash slots (see Nodes)
	most    int        // calls and pipelines in flight at once: maxInFlight, or a node's

	mu       sync.Mutex
	inflight int     // calls and senders holding a slot
	queue    []*call // calls waiting for the next pipeline
}

// call is a queued command.
type call struct {
	ctx      context.Context
	deadline time.Time
	cmd      redis.Cmder
	done     chan struct{}    // closed once answered
	trip     *fault.RoundTrip // set before done is closed when a pipeline of several failed it
}

// maxInFlight is how many calls or pipelines may be in flight at once.
// With one, Redis waits while the client reads a pipeline's replies and
// its callers prepare the next one; with two, the next pipeline overlaps
// that work; a third adds little and splits pipelines further (measured
// in docs/performance.md).
const maxInFlight = 2

func NewCoalescer(l Link, timeout time.Duration, dials *DialWatch) *Coalescer {
	return &Coalescer{Link: l, timeout: timeout, dials: dials, most: maxInFlight}
}

// SpanSlots makes c's batches calls of the library's slots function
// (see script.MergeStacks), whose stacks may be in several hash slots:
// for a client of one Redis Cluster node, which refuses a call that
// declares keys of several slots (CROSSSLOT). It returns c.
func (c *Coalescer) SpanSlots() *Coalescer {
	c.slots = true
	return c
}

// Link is how a Coalescer reaches Redis.
type Link interface {
	redis.Scripter
	// Process sends cmd and waits for its reply, until ctx's deadline.
	Process(ctx context.Context, cmd redis.Cmder) error
	// all sends cmds together and returns once each has its reply or
	// error.
	all(ctx context.Context, cmds []redis.Cmder)
}

// Client is a Link on a *redis.Client whose socket reads and writes stop
// at a call's deadline (see Bounded): a pipeline.
type Client struct{ *redis.Client }

func (c Client) all(ctx context.Context, cmds []redis.Cmder) {
	if len(cmds) == 1 {
		_ = c.Client.Process(ctx, cmds[0])
		return
	}
	pipelined(ctx, c.Pipeline(), cmds)
}

// pipelined sends cmds on pipe and waits for their replies.
func pipelined(ctx context.Context, pipe redis.Pipeliner, cmds []redis.Cmder) {
	for _, cmd := range cmds {
		_ = pipe.Process(ctx, cmd)
	}
	_, _ = pipe.Exec(ctx)
}

// Process sends cmd alone when a slot is free and nothing queued, else
// queues it for the next pipeline, within the store's timeout.
func (c *Coalescer) Process(ctx context.Context, cmd redis.Cmder) error {
	c.mu.Lock()
	if c.inflight < c.most && len(c.queue) == 0 {
		c.inflight++
		c.mu.Unlock()
		bc := c.dials.Bind(ctx, Deadline(ctx, c.timeout))
		err := bc.Ended(c.Link.Process(bc.Ctx, cmd))
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.inflight--
			c.mu.Unlock()
			return err
		}
		c.mu.Unlock()
		go c.send() // the slot passes to a sender for what queued meanwhile
		return err
	}
	k := &call{ctx: ctx, deadline: Deadline(ctx, c.timeout), cmd: cmd, done: make(chan struct{})}
	c.queue = append(c.queue, k)
	c.mu.Unlock()
	var err error
	select {
	case <-k.done:
		if err := cmd.Err(); err != nil && k.trip != nil {
			return fault.Shared(err, k.trip) // counted once by the breaker
		}
		return cmd.Err()
	case <-ctx.Done():
		err = ctx.Err()
	case <-c.expiry.after(k.deadline):
		err = context.DeadlineExceeded
	}
	c.mu.Lock()
	if i := slices.Index(c.queue, k); i >= 0 {
		c.queue = slices.Delete(c.queue, i, i+1) // never sent
	}
	c.mu.Unlock()
	// Else a pipeline took it: its command may still run.
	return err
}

// Deadline is a call's deadline: timeout from now, or its context's
// deadline if sooner.
func Deadline(ctx context.Context, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// send holds a slot: it sends the queue as one pipeline, answers its calls,
// and goes on with what queued meanwhile until the queue is empty, then
// frees the slot.
//
// The callers a pipeline answers often come straight back with their next
// decision. Before it takes the queue, a sender lets them run (yielding
// the processor, at most 4 times, never sleeping) until half as many calls
// as it last sent have queued, so that the next pipeline carries them
// instead of the first few (measured in docs/performance.md). At low load
// pipelines are small and it does not wait.
func (c *Coalescer) send() {
	last := 0
	for {
		for range 4 {
			c.mu.Lock()
			n := len(c.queue)
			c.mu.Unlock()
			if n >= last/2 {
				break
			}
			runtime.Gosched()
		}
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 {
			c.inflight--
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		last = len(batch)
		if batch = unsent(batch); len(batch) > 0 {
			c.pipeline(batch)
		}
	}
}

// unsent answers, without sending them, the calls of batch whose callers
// gave up while they were queued (their context ended or their deadline
// passed, and their goroutines have not yet taken them off the queue),
// and returns the others: a call is sent only while its caller waits.
func unsent(batch []*call) []*call {
	now := time.Now()
	return slices.DeleteFunc(batch, func(k *call) bool {
		err := k.ctx.Err()
		if err == nil && !now.Before(k.deadline) {
			err = context.DeadlineExceeded
		}
		if err != nil {
			k.cmd.SetErr(err)
			close(k.done)
		}
		return err != nil
	})
}

// pipeline sends batch as one pipeline, until the latest deadline of its
// calls (each of them returns at its own), and answers its calls.
func (c *Coalescer) pipeline(batch []*call) {
	last := batch[0].deadline
	for _, b := range batch[1:] {
		if b.deadline.After(last) {
			last = b.deadline
		}
	}
	// A caller giving up must not cancel the others; a failed dial ends
	// them all.
	bc := c.dials.Bind(context.WithoutCancel(batch[0].ctx), last)
	ctx := bc.Ctx
	cmds := make([]redis.Cmder, len(batch))
	for i, b := range batch {
		cmds[i] = b.cmd
	}
	merged, cmds := script.MergeStacks(ctx, cmds, c.slots)
	if merged != nil {
		cmds = append(cmds, merged.Cmd)
	}
	c.Link.all(ctx, cmds)
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			cmd.SetErr(bc.Ended(err))
		}
	}
	if merged != nil {
		merged.Answer()
	}
	var trip *fault.RoundTrip // one failure for the breaker, however many calls it failed
	for _, b := range batch {
		if len(batch) > 1 && b.cmd.Err() != nil {
			if trip == nil {
				trip = &fault.RoundTrip{}
			}
			b.trip = trip
		}
		close(b.done)
	}
}
