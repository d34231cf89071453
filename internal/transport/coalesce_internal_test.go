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
