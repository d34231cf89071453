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

// A caller's deadline sooner than the store's timeout ends its call: while
// Redis is paused for longer than the caller waits (and for less than the
// store's timeout), the decision fails with the caller's
// context.DeadlineExceeded instead of waiting for Redis to answer, with or
// without coalescing, on a client with or without ContextTimeoutEnabled,
// and on a cluster's masters.
func TestCallerDeadlineBeforeTimeout(t *testing.T) {
	s := redistest.Start(t)
	c := sharedCluster(t)
	addrs := c.Client.Options().Addrs // every node
	type client struct {
		name   string
		rdb    redis.Scripter
		admins []*redis.Client // to pause the servers
	}
	var clients []client
	for _, bounded := range []bool{false, true} {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: bounded})
		t.Cleanup(func() { rdb.Close() })
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: bounded})
		t.Cleanup(func() { cc.Close() })
		var masters []*redis.Client
		for _, n := range c.Nodes {
			masters = append(masters, n.Client)
		}
		name := map[bool]string{false: "", true: ", ContextTimeoutEnabled"}[bounded]
		clients = append(clients, client{"client" + name, rdb, []*redis.Client{s.Client}}, client{"cluster" + name, cc, masters})
	}
	for _, cl := range clients {
		for _, coalesce := range []bool{true, false} {
			lim, err := ruletest.Build(cl.rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}},
				redisstore.WithCoalescing(coalesce), redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lim.Allow(ctx, "r", "k"); err != nil { // the library is loaded, a connection open
				t.Fatal(err)
			}
			for _, a := range cl.admins {
				if err := a.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
					t.Fatal(err)
				}
			}
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			d, err := lim.Allow(short, "r", "k")
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
				t.Errorf("%s, coalescing %v: %+v, %v; want the caller's context.DeadlineExceeded", cl.name, coalesce, d, err)
			}
			for _, a := range cl.admins {
				if err := a.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
					t.Fatal(err)
				}
			}
			lim.Close()
		}
	}
}
