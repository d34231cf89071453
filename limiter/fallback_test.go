package limiter_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// counter counts the commands a client sends.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestFallbackWhileRedisIsDown(t *testing.T) {
	s := redistest.Start(t)
	calls := &counter{}
	s.Client.AddHook(calls)
	lim, err := limiter.New(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}},
		limiter.WithFallback(memstore.Must(), 300*time.Millisecond), limiter.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	d, err := lim.Allow(ctx, "r", "a")
	if err != nil || d.Fallback || !d.Allowed || d.Results[0].Remaining != 2 {
		t.Fatalf("Redis up: %+v %v", d, err)
	}

	s.Stop()
	d, err = lim.Allow(ctx, "r", "a")
	if !errors.Is(err, limiter.ErrBackend) || !d.Fallback || !d.Allowed || d.Results[0].Rule != "r" {
		t.Fatalf("first request after Redis died: %+v %v, want a fallback decision carrying the Redis error", d, err)
	}
	before := calls.n.Load()
	for i, want := range []bool{true, true, false} { // the fallback counts on its own: 3 per hour
		d, err = lim.Allow(ctx, "r", "a")
		if err != nil || !d.Fallback || d.Allowed != want {
			t.Fatalf("request %d while down: %+v %v, want fallback allowed=%v without a Redis error", i, d, err, want)
		}
	}
	if n := calls.n.Load() - before; n != 0 {
		t.Errorf("%d Redis calls while marked down, want none", n)
	}

	s.Restart(t)
	time.Sleep(400 * time.Millisecond) // past the retry interval
	d, err = lim.Allow(ctx, "r", "a")
	if err != nil || d.Fallback || !d.Allowed || d.Results[0].Remaining != 2 {
		t.Fatalf("Redis back: %+v %v, want Redis deciding again on its (fresh) state", d, err)
	}
}

func TestFallbackOptions(t *testing.T) {
	_, c := redistest.Mini(t)
	rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}}
	for _, opt := range []limiter.Option{limiter.WithFallback(nil, 0), limiter.WithFallback(memstore.Must(), -time.Second)} {
		if _, err := limiter.New(c, rules, opt); !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("got %v, want ErrConfig", err)
		}
	}
}
