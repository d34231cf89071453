package limiter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

func TestDenyCacheAnswersWithoutRedis(t *testing.T) {
	s := redistest.Start(t)
	calls := &counter{}
	s.Client.AddHook(calls)
	now := bases[0]
	lim, err := limiter.New(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}},
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
	if _, err := limiter.New(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}},
		limiter.WithDenyCache(-1)); !errors.Is(err, ratelimit.ErrConfig) {
		t.Errorf("negative size: %v", err)
	}
}
