package grpclimit_test

import (
	"context"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// fakeClock is a clock that only the sleeps of a Client move, exactly by
// what they were asked to wait.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

// client is a Client on clock c.
func (c *fakeClock) client() *grpclimit.Client {
	cl := &grpclimit.Client{}
	grpclimit.SetClock(cl, c.Now, c.Sleep)
	return cl
}

// onMemstore builds limiters on a memstore of their own that decide on
// clock c.
func (c *fakeClock) onMemstore() limiterOn {
	store := memstore.Must()
	return func(rules []limiter.Rule) (*limiter.Limiter, error) {
		return limiter.New(store, rules, limiter.WithClock(c.Now))
	}
}
