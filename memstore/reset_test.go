package memstore_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// A Reset that finds nothing to forget writes nothing (an operator's typo
// creates no key), on the memstore and on Redis; a Reset that forgets
// state still leaves its mark, which voids the give-back of a decision
// made before it. Today and in 2245, where µs timestamps have 16 digits.
func TestResetWritesNothingWhenNothingFound(t *testing.T) {
	type counted struct {
		store store.Store
		keys  func(now time.Time) int // live keys
	}
	stores := map[string]counted{}
	mem := memstore.Must()
	stores["memstore"] = counted{mem, func(now time.Time) int { return memstore.LiveAt(mem, now) }}
	for _, b := range redistest.Backends(t) {
		store, err := redisstore.New(b.Client)
		if err != nil {
			t.Fatal(err)
		}
		stores[b.Name] = counted{store, func(time.Time) int {
			n, err := b.Client.DBSize(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}}
	}
	rules := []limiter.Rule{{Name: "api", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Minute}}}
	for name, s := range stores {
		for i, base := range []time.Time{time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), time.Date(2245, 1, 1, 0, 0, 0, 0, time.UTC)} {
			t.Run(name+"/"+base.Format("2006"), func(t *testing.T) {
				lim, err := limiter.New(s.store, rules, limiter.WithClock(func() time.Time { return base }), limiter.WithPrefix("reset"+strconv.Itoa(i)))
				if err != nil {
					t.Fatal(err)
				}
				before := s.keys(base)
				if err := lim.Reset(ctx, "api", "nobody"); !errors.Is(err, limiter.ErrNotFound) {
					t.Fatalf("reset of an unknown identity: %v, want ErrNotFound", err)
				}
				if got := s.keys(base); got != before {
					t.Fatalf("reset of an unknown identity: %d keys, want %d", got, before)
				}

				early, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "alice", Cost: 2})
				if err != nil || !early.Allowed {
					t.Fatalf("decision before the reset: %+v, %v", early, err)
				}
				if err := lim.Reset(ctx, "api", "alice"); err != nil {
					t.Fatalf("reset of a known identity: %v", err)
				}
				if got, want := s.keys(base), before+1; got != want { // the state gone, the mark written
					t.Fatalf("after the reset of a known identity: %d keys, want %d", got, want)
				}
				if _, err := lim.Allow(ctx, "api", "alice"); err != nil {
					t.Fatal(err)
				}
				if _, err := lim.Settle(ctx, early, 0); err != nil {
					t.Fatal(err)
				}
				d, err := lim.Status(ctx, "api", "alice")
				if err != nil {
					t.Fatal(err)
				}
				if got, want := d.Results[0].Remaining, 4; got != want { // the early decision gave nothing back
					t.Errorf("remaining after a settlement across the reset: %d, want %d", got, want)
				}
			})
		}
	}
}

// A Reset after the state expired finds nothing, as on Redis, where the
// key is gone: ErrNotFound, and no mark written.
func TestResetOfExpiredStateFindsNothing(t *testing.T) {
	mem := memstore.Must()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lim, err := limiter.New(mem, []limiter.Rule{{Name: "api", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Minute}}},
		limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := lim.Allow(ctx, "api", "alice"); err != nil || !d.Allowed {
		t.Fatalf("%+v, %v", d, err)
	}
	now = now.Add(time.Hour)
	if err := lim.Reset(ctx, "api", "alice"); !errors.Is(err, limiter.ErrNotFound) {
		t.Fatalf("reset of expired state: %v, want ErrNotFound", err)
	}
	if got := memstore.Len(mem); got != 0 {
		t.Errorf("after the reset of expired state: %d entries, want 0", got)
	}
}
