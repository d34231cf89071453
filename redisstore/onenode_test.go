package redisstore_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A *redis.Client on a cluster node (WithCluster) coalesces decisions
// whose keys are in several hash slots of that node: the node refuses a
// batch call declaring keys of several slots (CROSSSLOT), so it must be a
// batch across slots. 64 goroutines over 300 identities, 5 admitted per
// identity: exactly 1500 are, with no error.
func TestClusterNodeClientCoalesces(t *testing.T) {
	s := redistest.Start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	if err := s.Client.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := s.Client.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster state not ok: %v\n%s", err, info)
		}
	}
	var p pipelines
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 80, ContextTimeoutEnabled: true})
	rdb.AddHook(&p)
	t.Cleanup(func() { rdb.Close() })
	lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Hour}}},
		redisstore.WithCluster(), redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	got := ruletest.Hammer(t, 64, 40, func() (limiter.Decision, error) {
		return lim.Allow(ctx, "r", fmt.Sprintf("u%d", n.Add(1)%300))
	})
	if got != 1500 {
		t.Errorf("admitted %d, want 1500", got)
	}
	t.Logf("%d round trips of several decisions, the largest of %d", p.n.Load(), p.largest.Load())
}
