package client_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// fakeClock is a clock that moves only when told to: by the sleeps of a
// Transport, and by the requests it sends. Its timers fire late, as real
// ones do, by up to 2 ms (the same pseudo-random lateness on every run),
// never early.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	late *rand.Rand
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), late: rand.New(rand.NewPCG(1, 0))}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d + time.Duration(c.late.Int64N(int64(2*time.Millisecond))))
	return nil
}

// transport is a Transport on clock c whose requests take a millisecond on
// c each way.
func (c *fakeClock) transport() *client.Transport {
	tr := &client.Transport{Base: latency{c, time.Millisecond}}
	client.SetClock(tr, c.Now, c.Sleep)
	return tr
}

// latency is a network that takes leg on a fake clock each way.
type latency struct {
	clock *fakeClock
	leg   time.Duration
}

func (l latency) RoundTrip(req *http.Request) (*http.Response, error) {
	l.clock.Advance(l.leg)
	res, err := http.DefaultTransport.RoundTrip(req)
	l.clock.Advance(l.leg)
	return res, err
}
