package ratelimit_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// maxRotatingKeyBytes bounds the Redis memory (used_memory) one rotating
// identity's sliding-window key costs, with its TTL (docs/reliability.md
// has the figure measured).
const maxRotatingKeyBytes = 256

// rotationStart is a decision clock's start, aligned to the second.
var rotationStart = time.Unix(1_795_000_000, 0)

// rotatingLimiter decides a sliding window of 10 per window on rdb at the
// instant *now, with a store timeout no busy test machine reaches. A key of an identity seen once lives until the end of its
// window and one microsecond more (the previous window's single unit then
// weighs nothing), rounded up to the millisecond: at most window + 1 ms.
func rotatingLimiter(t *testing.T, rdb redis.Scripter, window time.Duration, now *time.Time) *limiter.Limiter {
	t.Helper()
	lim, err := limiter.New(mwtest.RedisStore(t, rdb, redisstore.WithTimeout(time.Minute)),
		[]limiter.Rule{{Name: "per-ip", Algorithm: algorithms.SlidingWindow{Limit: 10, Window: window}}},
		limiter.WithClock(func() time.Time { return *now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	return lim
}

// admitAll sends one request for each identity "rot-<i>", from <= i < to,
// from 8 goroutines, and fails t unless each is allowed.
func admitAll(t *testing.T, lim *limiter.Limiter, from, to int) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := from + g; i < to; i += 8 {
				d, err := lim.Allow(context.Background(), "per-ip", "rot-"+strconv.Itoa(i))
				if err != nil || !d.Allowed {
					t.Errorf("identity %d: allowed %v, %v; want allowed", i, d.Allowed, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// dbSize is the number of keys in rdb.
func dbSize(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	n, err := rdb.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestRotatingIdentitiesAreBoundedByTTL: identities that each send one
// request and never come back hold no more keys than those that arrived
// within one key TTL (window + 1 ms), and none once that TTL has passed; on
// a real Redis each such key carries a TTL no longer than that and costs at
// most maxRotatingKeyBytes.
//
// It runs in parallel, its halves side by side: each on a server of its
// own, on a passed-in clock, with a store timeout of a minute.
func TestRotatingIdentitiesAreBoundedByTTL(t *testing.T) {
	t.Parallel()
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		// 100 new identities every 100 ms of the decision clock, for 3
		// windows of 1 s; the server's TTLs move with the clock.
		const perStep, step, steps, window = 100, 100 * time.Millisecond, 30, time.Second
		maxTTL := window + time.Millisecond
		srv, rdb := redistest.Mini(t)
		now := rotationStart
		lim := rotatingLimiter(t, rdb, window, &now)
		bound := perStep * (int(maxTTL/step) + 1) // the arrivals of the last maxTTL, this step's included
		peak := 0
		for s := range steps {
			admitAll(t, lim, s*perStep, (s+1)*perStep)
			keys := dbSize(t, rdb)
			if keys > bound {
				t.Fatalf("step %d: %d keys after %d identities, want at most %d (%d a step, TTL %v)", s, keys, (s+1)*perStep, bound, perStep, maxTTL)
			}
			peak = max(peak, keys)
			now = now.Add(step)
			srv.FastForward(step)
		}
		if peak <= bound-perStep {
			t.Errorf("at most %d keys live, want %d: keys expire before their window ends", peak, bound)
		}
		now = now.Add(maxTTL)
		srv.FastForward(maxTTL)
		if keys := dbSize(t, rdb); keys != 0 {
			t.Errorf("%d keys left once their TTL passed, want 0", keys)
		}
		t.Logf("%d identities: at most %d keys live (bound %d), none after the TTL", steps*perStep, peak, bound)
	})
	t.Run("redis-server", func(t *testing.T) {
		t.Parallel()
		// 20,000 identities at one instant of an hour-long window: all live,
		// each with a TTL of at most the window and 1 ms.
		const n, window = 20_000, time.Hour
		srv := redistest.Start(t)
		ctx := context.Background()
		now := rotationStart
		lim := rotatingLimiter(t, srv.Client, window, &now)
		admitAll(t, lim, -64, 0) // loads the script and opens the connections
		base, baseKeys := redistest.UsedMemory(t, srv.Client), dbSize(t, srv.Client)
		admitAll(t, lim, 0, n)
		if keys := dbSize(t, srv.Client) - baseKeys; keys != n {
			t.Fatalf("%d keys for %d identities", keys, n)
		}
		used := redistest.UsedMemory(t, srv.Client) - base
		if used > n*maxRotatingKeyBytes {
			t.Errorf("%d identities use %d bytes (%d per key), want at most %d per key", n, used, used/n, maxRotatingKeyBytes)
		}
		keys, err := srv.Client.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		pipe := srv.Client.Pipeline()
		ttls := make([]*redis.DurationCmd, len(keys))
		for i, k := range keys {
			ttls[i] = pipe.PTTL(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, c := range ttls {
			if ttl := c.Val(); ttl <= 0 || ttl > window+time.Millisecond {
				t.Fatalf("key %q: TTL %v, want up to %v", trunc(keys[i]), ttl, window+time.Millisecond)
			}
		}
		t.Logf("%d identities: %d bytes (%d per key)", n, used, used/n)
	})
}
