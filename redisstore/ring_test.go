package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
)

// On a Ring, concurrent decisions share each shard's round trips and batch
// calls and stay exact (see spreadExactly), and both shards hold state.
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
	spreadExactly(t, ring, &p, "shard")
	if a.Client.DBSize(ctx).Val() == 0 || b.Client.DBSize(ctx).Val() == 0 {
		t.Errorf("keys on the shards: %d and %d, want both used", a.Client.DBSize(ctx).Val(), b.Client.DBSize(ctx).Val())
	}
}
