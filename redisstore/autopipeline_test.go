package redisstore_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// Through go-redis's AutoPipeliner (the blocking face, which waits for its
// batch whatever the context), decisions stay exact and return at the
// store's timeout while Redis is paused, without a goroutine per call: 32
// waiting calls add fewer than 48 goroutines (a guard goroutine each
// would add 64).
func TestAutoPipelinerTimeouts(t *testing.T) {
	s := redistest.Start(t)
	ap, err := s.Client.AutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.Close() })
	lim, err := ruletest.Build(ap, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}},
		redisstore.WithTimeout(100*time.Millisecond), limiter.WithRetryInterval(time.Millisecond), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := ruletest.Hammer(t, 64, 4, func() (limiter.Decision, error) { return lim.Allow(ctx, "r", "hot") }); got != 100 {
		t.Fatalf("admitted %d of 256, want exactly 100", got)
	}

	admin := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr})
	defer admin.Close()
	before := runtime.NumGoroutine()
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 32)
	took := make([]time.Duration, 32)
	for i := range 32 {
		wg.Go(func() {
			t0 := time.Now()
			_, errs[i] = lim.Allow(ctx, "r", "k")
			took[i] = time.Since(t0)
		})
	}
	time.Sleep(50 * time.Millisecond) // all waiting, none timed out yet
	during := runtime.NumGoroutine()
	wg.Wait()
	if during-before >= 48 {
		t.Errorf("%d goroutines while 32 calls waited (from %d to %d)", during-before, before, during)
	}
	for i, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, limiter.ErrUnavailable) {
			t.Errorf("call %d: %v, want a timeout (or Redis marked down)", i, err)
		}
		// The pause lasts 1 s: a call that returned well before it ended
		// did not wait for its batch.
		if took[i] > 800*time.Millisecond {
			t.Errorf("call %d took %v (started %v after the pause)", i, took[i], time.Since(start)-took[i])
		}
	}
}
