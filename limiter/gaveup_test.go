package limiter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A caller whose deadline passes while Redis decides gave up: its failure
// says nothing of Redis, so the fallback store does not answer it. With
// Redis paused for longer than the caller's deadline (and the store's
// timeout longer than both), Decide fails with context.DeadlineExceeded,
// and no decision of the fallback store.
func TestCallerGaveUpNotAnsweredByFallback(t *testing.T) {
	s := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer admin.Close()
	for _, fallback := range []bool{false, true} {
		opts := []limiter.Option{limiter.WithDenyCache(0, 0), limiter.WithRetryInterval(time.Hour)}
		if fallback {
			opts = append(opts, limiter.WithFallback(memstore.Must()))
		}
		st := mustStore(redisstore.New(s.Client, redisstore.WithTimeout(10*time.Second)))
		lim := newLimiter(t, st, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}}, opts...)
		if _, err := lim.Allow(ctx, "r", "k"); err != nil {
			t.Fatal(err)
		}
		if err := admin.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		d, err := lim.Allow(short, "r", "k")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || d.Allowed || d.Fallback {
			t.Errorf("fallback %v: %+v, %v; want context.DeadlineExceeded and no decision", fallback, d, err)
		}
		if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			t.Fatal(err)
		}
		if d, err := lim.Allow(ctx, "r", "k"); err != nil || d.Fallback {
			t.Errorf("fallback %v: after the pause: %+v, %v", fallback, d, err)
		}
		lim.Close()
	}
}
