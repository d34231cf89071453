package redisstore_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// On a Ring, concurrent decisions share each shard's round trips and batch
// calls and stay exact: 64 goroutines over 300 identities on two shards, 5
// per identity, admit exactly 1500, and both shards hold state.
func TestRingCoalescesPerShard(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	var p pipelines
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}, PoolSize: 80, ContextTimeoutEnabled: true,
		NewClient: func(opt *redis.Options) *redis.Client {
			c := redis.NewClient(opt)
			c.AddHook(&p)
			return c
		}})
	t.Cleanup(func() { ring.Close() })
	lim, err := ruletest.Build(ring, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Hour}}},
		redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	got := ruletest.Hammer(t, 64, 40, func() (limiter.Decision, error) {
		return lim.Allow(ctx, "r", fmt.Sprint("id-", n.Add(1)%300))
	})
	if got != 300*5 {
		t.Errorf("admitted %d, want %d", got, 300*5)
	}
	t.Logf("%d round trips to a shard of several decisions, the largest of %d", p.n.Load(), p.largest.Load())
	if p.largest.Load() < 2 {
		t.Error("no round trip to a shard carried more than one decision")
	}
	if a.Client.DBSize(ctx).Val() == 0 || b.Client.DBSize(ctx).Val() == 0 {
		t.Errorf("keys on the shards: %d and %d, want both used", a.Client.DBSize(ctx).Val(), b.Client.DBSize(ctx).Val())
	}
}
