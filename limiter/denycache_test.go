package limiter_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func TestDenyCacheAnswersWithoutRedis(t *testing.T) {
	s := redistest.Start(t)
	calls := &counter{}
	s.Client.AddHook(calls)
	now := bases[0]
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}},
		limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		d, err := lim.Allow(ctx, "r", "a")
		if err != nil || d.Allowed != want || d.Cached {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
		// The caller owns the results: editing them cannot corrupt the cache.
		d.Results[0].Rule, d.Results[0].RetryAfter = "edited", time.Hour
	}
	before := calls.n.Load()
	now = now.Add(400 * time.Millisecond)
	d, err := lim.Allow(ctx, "r", "a")
	if err != nil || d.Allowed || !d.Cached || d.RetryAfter() != 600*time.Millisecond || d.Results[0].Rule != "r" || !d.At.Equal(now) {
		t.Fatalf("denied again 400 ms later: %+v %v, want a cached deny with 600 ms to wait", d, err)
	}
	if n := calls.n.Load() - before; n != 0 {
		t.Errorf("%d Redis calls for a cached deny", n)
	}
	// Another identity, and another cost, are not in the cache.
	if d, _ := lim.Allow(ctx, "r", "b"); !d.Allowed || d.Cached {
		t.Errorf("another identity: %+v", d)
	}
	// 1 ms before the wait ends the cache has let go: Redis decides (deny).
	now = bases[0].Add(999 * time.Millisecond)
	if d, _ := lim.Allow(ctx, "r", "a"); d.Allowed || d.Cached {
		t.Errorf("at the end of the wait: %+v, want Redis's own deny", d)
	}
	now = bases[0].Add(time.Second)
	if d, _ := lim.Allow(ctx, "r", "a"); !d.Allowed {
		t.Errorf("after the wait: %+v, want allowed", d)
	}
	if _, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}},
		limiter.WithDenyCache(-1, 0)); !errors.Is(err, ratelimit.ErrConfig) {
		t.Errorf("negative size: %v", err)
	}
}

// An operator resets a client that two instances have cached as denied (a
// daily limit): every instance admits it again within the cache's maxAge,
// not after the day.
func TestDenyCacheStalenessIsBounded(t *testing.T) {
	s := redistest.Start(t)
	now := bases[0]
	rules := []limiter.Rule{{Name: "daily", Algorithm: algorithms.GCRA{Rate: 1, Period: 24 * time.Hour, Burst: 1}}}
	var instances []*limiter.Limiter
	for range 2 {
		lim, err := ruletest.Build(s.Client, rules, limiter.WithClock(func() time.Time { return now }), redisstore.WithMinTTL(48*time.Hour),
			limiter.WithDenyCache(100, 500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		instances = append(instances, lim)
	}
	if d, err := instances[0].Allow(ctx, "daily", "a"); err != nil || !d.Allowed {
		t.Fatalf("first request: %+v %v", d, err)
	}
	for i, lim := range instances {
		if d, _ := lim.Allow(ctx, "daily", "a"); d.Allowed || d.Cached || d.RetryAfter() < 23*time.Hour {
			t.Fatalf("instance %d: %+v, want Redis's denial for about a day", i, d)
		}
	}
	if err := s.Client.Del(ctx, "ratelimit:{daily:a}:gce").Err(); err != nil { // the operator's reset
		t.Fatal(err)
	}
	now = now.Add(499 * time.Millisecond)
	for i, lim := range instances {
		if d, _ := lim.Allow(ctx, "daily", "a"); d.Allowed || !d.Cached {
			t.Errorf("instance %d within maxAge: %+v, want the cached denial", i, d)
		}
	}
	now = now.Add(time.Millisecond)
	admitted := 0
	for _, lim := range instances {
		if d, _ := lim.Allow(ctx, "daily", "a"); d.Allowed {
			admitted++
		}
	}
	if admitted != 1 { // one instance takes the fresh unit, the other is denied by Redis again
		t.Errorf("after maxAge: %d instances admitted, want the reset unit admitted once", admitted)
	}
}

// A cache full of live denials still caches a newcomer's denial: it
// replaces an old entry instead of refusing the new one.
func TestFullDenyCacheReplacesEntries(t *testing.T) {
	_, c := redistest.Mini(t)
	now := bases[0]
	lim, err := ruletest.Build(c, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}}},
		limiter.WithClock(func() time.Time { return now }), redisstore.WithMinTTL(time.Hour), limiter.WithDenyCache(16, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 { // far more denied clients than the cache holds
		id := fmt.Sprint("abuser", i)
		lim.Allow(ctx, "r", id)
		if d, _ := lim.Allow(ctx, "r", id); d.Allowed {
			t.Fatalf("%s admitted twice", id)
		}
	}
	lim.Allow(ctx, "r", "newcomer")
	lim.Allow(ctx, "r", "newcomer") // denied by Redis, cached
	if d, _ := lim.Allow(ctx, "r", "newcomer"); d.Allowed || !d.Cached {
		t.Errorf("newcomer on a full cache: %+v, want a cached denial", d)
	}
}
