package rls_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// TestShutdownGivesLeasesBack: a leased global rule on the limiter the
// Server serves (built directly, beside the configured ones: NewServer
// refuses a limiter whose rule of a configured limit differs from
// Limits', and a Lease is such a difference); the shutdown a server does
// (its gRPC calls drained, then the limiter closed) gives back every
// leased unit not spent, exactly (a window's refunds add up).
func TestShutdownGivesLeasesBack(t *testing.T) {
	addr := testredis.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	cfg, err := rls.Parse("test.yaml", []byte(serverConfig))
	if err != nil {
		t.Fatal(err)
	}
	st, err := redisstore.New(rdb, redisstore.WithTimeout(storeTimeout))
	if err != nil {
		t.Fatal(err)
	}

	// A leased rule under a configured limit's name is refused.
	leasedLimits := rls.Limits(cfg)
	leasedLimits[0].Lease = time.Minute
	if lim, err := limiter.New(st, leasedLimits); err != nil {
		t.Fatal(err)
	} else {
		if _, err := rls.NewServer(lim, []*rls.Config{cfg}, rls.Options{}); !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("NewServer on a leased configured limit: %v, want ErrConfig", err)
		}
		_ = lim.Close()
	}

	const quota = 1000
	global := limiter.Rule{Name: "edge-global", Algorithm: algorithms.FixedWindow{Limit: quota, Window: time.Hour}}
	leased := global
	leased.Lease = time.Minute
	lim, err := limiter.New(st, append(rls.Limits(cfg), leased))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = lim.Close()
		}
	})
	srv, err := rls.NewServer(lim, []*rls.Config{cfg}, rls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gs, client := dialServer(t, srv)

	// What the store holds of the global rule, seen by an unleased
	// limiter on the same Redis.
	ob := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = ob.Close() })
	obStore, err := redisstore.New(ob, redisstore.WithTimeout(storeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	observer, err := limiter.New(obStore, []limiter.Rule{global}, limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = observer.Close() })
	remaining := func() int {
		t.Helper()
		d, err := observer.Decide(context.Background(), limiter.Check{Rule: global.Name, Identity: "all", Cost: 0})
		if err != nil {
			t.Fatal(err)
		}
		return d.Results[0].Remaining
	}
	waitForFreshHour(t)

	// Requests: each decided by the Server, and each spending a unit of
	// the leased global rule through the Server's limiter.
	const spent = 40
	leasedUnits := 0
	for range spent {
		if res := ask(t, client, desc("tenant", "t1")); res.OverallCode != ok {
			t.Fatalf("request: %v", res.OverallCode)
		}
		d, err := lim.Allow(context.Background(), global.Name, "all")
		if err != nil || !d.Allowed {
			t.Fatalf("the leased rule: %v, %v", d.Allowed, err)
		}
		leasedUnits += d.Results[0].Leased
	}
	before := remaining()
	t.Logf("%d units spent of a leased rule of %d an hour; the store holds %d remaining (%d units taken in leases)", spent, quota, before, leasedUnits)
	if before >= quota-spent {
		t.Fatalf("the store has %d remaining after %d spent: no lease was taken beyond them, nothing to give back", before, spent)
	}

	// Shutdown: drain, then close the limiter.
	gs.GracefulStop()
	if err := lim.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed = true
	if got := remaining(); got != quota-spent {
		t.Fatalf("after Close the store has %d remaining; want %d (%d spent, the leases' other units given back)", got, quota-spent, spent)
	}
}
