package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A store on a cluster client that has not read the cluster's slots yet
// finds a decision's master within the store's timeout: while every node
// is paused for longer than the timeout, the first decision fails with
// context.DeadlineExceeded instead of waiting for the slots.
func TestClusterFirstRouteWithinTimeout(t *testing.T) {
	c := sharedCluster(t)
	for _, bounded := range []bool{true, false} {
		lim := clusterLimiter(t, c, bounded)
		for _, n := range c.Nodes {
			if err := n.Client.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
				t.Fatal(err)
			}
		}
		d, err := lim.Allow(ctx, "r", "k")
		if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
			t.Errorf("ContextTimeoutEnabled %v: %+v, %v; want context.DeadlineExceeded", bounded, d, err)
		}
		for _, n := range c.Nodes {
			if err := n.Client.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
				t.Fatal(err)
			}
		}
		lim.Close()
	}
}

// On a cluster, loading the function library again after "Function not
// found" is bounded by the store's timeout: with the library flushed on
// every master and another master than the decision's paused for longer
// than the timeout, the decision fails with context.DeadlineExceeded
// instead of waiting for that master to load it.
func TestClusterLibraryLoadWithinTimeout(t *testing.T) {
	c := sharedCluster(t)
	master, _ := c.MasterOf(t, "{r:k}")
	var other *redistest.Server
	for _, n := range c.Nodes {
		if n != master {
			other = n
		}
	}
	for _, bounded := range []bool{true, false} {
		lim := clusterLimiter(t, c, bounded)
		if _, err := lim.Allow(ctx, "r", "k"); err != nil { // the library is loaded, the slots read
			t.Fatal(err)
		}
		for _, n := range c.Nodes {
			if err := n.Client.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := other.Client.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		d, err := lim.Allow(ctx, "r", "k")
		if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
			t.Errorf("ContextTimeoutEnabled %v: %+v, %v; want context.DeadlineExceeded", bounded, d, err)
		}
		if err := other.Client.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			t.Fatal(err)
		}
		lim.Close()
	}
}

// clusterLimiter is a limiter of one fixed window on a new client of c,
// with a store timeout of 100 ms; bounded sets the client's
// ContextTimeoutEnabled.
func clusterLimiter(t *testing.T, c *redistest.Cluster, bounded bool) *limiter.Limiter {
	t.Helper()
	addrs := c.Client.Options().Addrs // every node
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: bounded})
	t.Cleanup(func() { cc.Close() })
	lim, err := ruletest.Build(cc, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}},
		redisstore.WithTimeout(100*time.Millisecond), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return lim
}
