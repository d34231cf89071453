package transport

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
)

// Calls that give up at random moments, queued, holding the baton or in
// flight, never leave the coalescer stuck: every call returns, and once
// all have, it is idle with an empty queue. Bounded: 32 goroutines, 200
// calls each, deadlines of 0 to 400 µs (about a round trip).
func TestCoalescerNeverStalls(t *testing.T) {
	s := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr})
	defer rdb.Close()
	c := NewCoalescer(Client{rdb}, time.Second, nil)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(400))*time.Microsecond)
				_ = c.Process(ctx, redis.NewCmd(ctx, "ping"))
				cancel()
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		idle := c.inflight == 0 && len(c.queue) == 0
		c.mu.Unlock()
		if idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the coalescer is still busy with no call left")
		}
		time.Sleep(time.Millisecond)
	}
	if err := c.Process(context.Background(), redis.NewCmd(context.Background(), "ping")); err != nil {
		t.Fatalf("after the storm: %v", err)
	}
}

// A queued call whose caller gave up (its context ended, or its deadline
// passed) before its pipeline left is not sent: its caller has returned,
// or returns, with the context's error, and Redis must not run a decision
// nobody waits for. The sender is run by hand on a queue of such calls
// and one live call (the state a caller sees when its goroutine has not
// yet run to take its call off the queue).
func TestCoalescerSendsNoCallGivenUp(t *testing.T) {
	s := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr})
	defer rdb.Close()
	c := NewCoalescer(Client{rdb}, time.Second, nil)
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	queued := func(ctx context.Context, deadline time.Time, key string) *call {
		return &call{ctx: ctx, deadline: deadline, cmd: redis.NewCmd(ctx, "incr", key), done: make(chan struct{})}
	}
	gone := queued(canceled, time.Now().Add(time.Hour), "canceled")
	late := queued(ctx, time.Now().Add(-time.Millisecond), "late")
	live := queued(ctx, time.Now().Add(time.Hour), "live")
	c.mu.Lock()
	c.queue = []*call{gone, late, live}
	c.inflight = 1 // the slot the sender holds
	c.mu.Unlock()
	c.send()
	for _, k := range []*call{gone, late, live} {
		select {
		case <-k.done:
		default:
			t.Fatalf("%v: not answered", k.cmd.Args())
		}
	}
	if v, err := live.cmd.(*redis.Cmd).Int(); err != nil || v != 1 {
		t.Errorf("the live call: %d %v, want 1", v, err)
	}
	for _, k := range []*call{gone, late} {
		if k.cmd.Err() == nil {
			t.Errorf("%v: answered without an error", k.cmd.Args())
		}
	}
	for _, key := range []string{"canceled", "late"} {
		if n, err := s.Client.Exists(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("the call on %q given up while queued ran in Redis (%d, %v)", key, n, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight != 0 || len(c.queue) != 0 {
		t.Errorf("after the sender: %d in flight, %d queued", c.inflight, len(c.queue))
	}
}
