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
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
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
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 4, Window: time.Hour}}},
		limiter.WithFallback(memstore.Must()), limiter.WithRetryInterval(300*time.Millisecond), redisstore.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	d, err := lim.Allow(ctx, "r", "a")
	if err != nil || d.Fallback || !d.Allowed || d.Results[0].Remaining != 3 {
		t.Fatalf("Redis up: %+v %v", d, err)
	}

	s.Stop()
	for i := range 3 { // the failures that mark Redis down
		d, err = lim.Allow(ctx, "r", "a")
		if !errors.Is(err, limiter.ErrBackend) || !d.Fallback || !d.Allowed || d.Results[0].Rule != "r" {
			t.Fatalf("request %d after Redis died: %+v %v, want a fallback decision carrying the Redis error", i, d, err)
		}
	}
	before := calls.n.Load()
	for i, want := range []bool{true, false} { // the fallback counts on its own: 4 per hour
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
	if err != nil || d.Fallback || !d.Allowed || d.Results[0].Remaining != 3 {
		t.Fatalf("Redis back: %+v %v, want Redis deciding again on its (fresh) state", d, err)
	}
}

func TestFallbackOptions(t *testing.T) {
	_, c := redistest.Mini(t)
	rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}}
	for _, opt := range []limiter.Option{limiter.WithFallback(nil), limiter.WithRetryInterval(-time.Second), limiter.WithRetryInterval(0)} {
		if _, err := ruletest.Build(c, rules, opt); !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("got %v, want ErrConfig", err)
		}
	}
}

// Without a fallback, a Redis that refuses connections costs the first
// failures: three in a row mark it down, and until the retry interval has
// passed every decision fails at once with ErrUnavailable, without a Redis
// call; then one probe brings decisions back.
func TestFailFastWhileRedisIsDown(t *testing.T) {
	s := redistest.Start(t)
	calls := &counter{}
	s.Client.AddHook(calls)
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}}},
		redisstore.WithTimeout(100*time.Millisecond), limiter.WithRetryInterval(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Allow(ctx, "r", "a"); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	var first time.Duration
	for i := range 3 {
		start := time.Now()
		_, err = lim.Allow(ctx, "r", "a")
		first = max(first, time.Since(start))
		if !errors.Is(err, limiter.ErrBackend) || errors.Is(err, limiter.ErrUnavailable) {
			t.Fatalf("request %d after Redis died: %v, want the Redis failure", i, err)
		}
	}
	before := calls.n.Load()
	var worst time.Duration
	for i := range 100 {
		start := time.Now()
		_, err := lim.Allow(ctx, "r", "a")
		worst = max(worst, time.Since(start))
		if !errors.Is(err, limiter.ErrBackend) || !errors.Is(err, limiter.ErrUnavailable) {
			t.Fatalf("request %d while marked down: %v, want ErrUnavailable", i, err)
		}
	}
	if n := calls.n.Load() - before; n != 0 {
		t.Errorf("%d Redis calls while marked down, want none", n)
	}
	t.Logf("Redis refused: the first 3 requests at most %v each (a refused dial ends them at once), the next 100 at most %v each", first, worst)

	s.Restart(t)
	time.Sleep(350 * time.Millisecond) // past the retry interval
	if d, err := lim.Allow(ctx, "r", "a"); err != nil || !d.Allowed || d.Fallback {
		t.Fatalf("Redis back: %+v %v, want Redis deciding again", d, err)
	}
}
