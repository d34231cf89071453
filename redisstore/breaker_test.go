package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// The limiter's breaker over a Redis store, against a real redis-server.

// Redis refusing connections: go-redis redials until the call's deadline,
// but the decisions fail with the refusal (at once), which the breaker
// logs as the cause when it marks Redis down; no error carries the
// identity.
func TestRefusedConnectionIsTheCause(t *testing.T) {
	for _, coalesce := range []bool{true, false} {
		logged := logtest.Capture(t)
		s := redistest.Start(t)
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr}) // go-redis's defaults
		defer rdb.Close()
		lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}},
			limiter.WithDenyCache(0, 0), redisstore.WithCoalescing(coalesce))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lim.Allow(context.Background(), "r", "alice@example.com"); err != nil {
			t.Fatal(err)
		}
		s.Stop()
		for i := range 3 { // the failures that mark Redis down
			_, err := lim.Allow(context.Background(), "r", "alice@example.com")
			if !errors.Is(err, limiter.ErrBackend) || !errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "alice") {
				t.Errorf("coalescing %v, decision %d with Redis refusing connections: %v, want ErrBackend with the refusal", coalesce, i, err)
			}
		}
		if n, errs := logtest.Count(logged, "rate limit backend down"); n != 1 || !strings.Contains(errs[0], "connection refused") {
			t.Errorf("coalescing %v: logged %d down transitions, errors %q; want one, caused by the refused connection", coalesce, n, errs)
		}
	}
}

// CLIENT KILL of a healthy Redis, 5 times 250 ms apart, under 64
// goroutines deciding for one client (deny cache off): each kill fails the
// decisions in flight, the next ones redial and succeed, and Redis is
// never marked down; the limit holds.
func TestClientKillKeepsRedisUp(t *testing.T) {
	logged := logtest.Capture(t)
	s := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}}, limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var admitted, denied, failed, unavailable atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for n := 0; n < 100_000 && !stop.Load(); n++ {
				d, err := lim.Allow(context.Background(), "r", "one")
				switch {
				case errors.Is(err, limiter.ErrUnavailable):
					unavailable.Add(1)
				case err != nil:
					failed.Add(1)
				case d.Allowed:
					admitted.Add(1)
				default:
					denied.Add(1)
				}
			}
		})
	}
	kills := 5
	for range kills {
		time.Sleep(250 * time.Millisecond)
		if err := s.Client.Do(context.Background(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
			t.Error(err)
		}
	}
	time.Sleep(250 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	down, causes := logtest.Count(logged, "rate limit backend down")
	up, _ := logtest.Count(logged, "rate limit backend up")
	t.Logf("%d CLIENT KILLs: admitted %d (limit 100), denied %d, failed %d, turned away as down %d; marked down %d times, up %d",
		kills, admitted.Load(), denied.Load(), failed.Load(), unavailable.Load(), down, up)
	if failed.Load() == 0 {
		t.Fatal("no decision was in flight at a kill: the test proves nothing")
	}
	if down != 0 || unavailable.Load() != 0 {
		t.Errorf("Redis, up all along, was marked down %d times (causes %q), turning %d decisions away", down, causes, unavailable.Load())
	}
	if admitted.Load() > 100 {
		t.Errorf("admitted %d, limit 100", admitted.Load())
	}
}
