package memstore_test

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

func TestConcurrentRequestsAdmitExactlyTheLimit(t *testing.T) {
	for _, r := range ruletest.Six(100) {
		lim, err := limiter.New(memstore.Must(), []limiter.Rule{r})
		if err != nil {
			t.Fatal(err)
		}
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 5 {
					if d, err := lim.Allow(ctx, r.Name, "hot"); err != nil {
						t.Error(err)
					} else if d.Allowed {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if got := admitted.Load(); got != 100 {
			t.Errorf("%s: admitted %d, want 100", r.Name, got)
		}
	}
}

// Stacks over keys in different shards lock them in order: concurrent
// stacks in opposite orders must neither deadlock nor over-admit.
func TestStacksAcrossShards(t *testing.T) {
	rules := ruletest.Six(50)
	lim, err := limiter.New(memstore.Must(), rules)
	if err != nil {
		t.Fatal(err)
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for range 10 {
				checks := []limiter.Check{{Rule: "fw", Identity: "a", Cost: 1}, {Rule: "tb", Identity: "b", Cost: 1}, {Rule: "gc", Identity: "c", Cost: 1}}
				if g%2 == 1 {
					checks[0], checks[2] = checks[2], checks[0]
				}
				if d, err := lim.Decide(ctx, checks...); err != nil {
					t.Error(err)
				} else if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 50 {
		t.Errorf("admitted %d stacks, want 50", got)
	}
}

func TestMemoryIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	store := memstore.Must(memstore.WithMaxKeys(1000))
	lim, err := limiter.New(store, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 1}}},
		limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	// 100,000 distinct identities within one TTL: the cap holds.
	for i := range 100_000 {
		if _, err := lim.Allow(ctx, "r", strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := memstore.Len(store); n > 1000 {
		t.Errorf("%d entries held after 100k identities, cap is 1000", n)
	}
	// Once their TTL (100 ms) has passed, new writes shed the old ones.
	for i := range 2000 {
		if i%10 == 0 {
			now = now.Add(100 * time.Millisecond)
		}
		if d, err := lim.Allow(ctx, "r", "late"+strconv.Itoa(i%200)); err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
	}
	// What stays: the late identities written within the last expiry grace
	// (a second) or since sampled, up to 200, and first entries sampling
	// has not reached yet (it is random; a store of 1,000 keys is one
	// shard). Over 200 runs this held 146 to 176 entries; without the
	// sampling it would hold the cap's 1,000.
	if n := memstore.Len(store); n > 400 {
		t.Errorf("%d entries held after expiry and a sweep, want the late ones and few of the first", n)
	}
}

func TestInvalidOptions(t *testing.T) {
	for _, opt := range []memstore.Option{memstore.WithMaxKeys(0), memstore.WithMaxKeys(-1)} {
		if _, err := memstore.New(opt); !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("got %v, want ErrConfig", err)
		}
	}
}

func TestExpiredEntriesKeptForASecond(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2245, 3, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	store := memstore.Must()
	lim, err := limiter.New(store, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1000}}},
		limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	allow := func(prefix string, ids, times int) {
		t.Helper()
		for range times {
			for i := range ids {
				if d, err := lim.Allow(ctx, "r", prefix+strconv.Itoa(i)); err != nil || !d.Allowed {
					t.Fatal(d, err)
				}
			}
		}
	}
	allow("old", 64, 1) // each expires 1 ms later
	steps := []struct {
		at   time.Duration
		want int
	}{
		{600 * time.Millisecond, 1064}, // expired for under a second: kept for reuse
		{2 * time.Second, 1000},        // expired for over a second: shed by the writes
	}
	for _, s := range steps {
		now = t0.Add(s.at)
		allow("new", 1000, 20)
		if got := memstore.Len(store); got != s.want {
			t.Errorf("at %v: %d entries held, want %d", s.at, got, s.want)
		}
	}
}

// TestCapDropsExpiredBeforeLive: past MaxKeys, a shard drops its expired
// entries, those kept for reuse included, before any live one: a live
// entry dropped is a client whose next request is admitted afresh.
func TestCapDropsExpiredBeforeLive(t *testing.T) {
	t0 := time.Date(2245, 3, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	store := memstore.Must(memstore.WithMaxKeys(640)) // one shard of 640
	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "slow", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}},              // live an hour
		{Name: "fast", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1000}}, // live 1 ms
	}, limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	allow := func(rule, id string) bool {
		t.Helper()
		d, err := lim.Allow(ctx, rule, id)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	var victims []string
	for i := range 64 {
		victims = append(victims, "victim"+strconv.Itoa(i))
		if !allow("slow", victims[i]) {
			t.Fatalf("%s refused at first", victims[i])
		}
	}
	// A flood of identities, one live at a time: the shards fill with
	// entries expired for less than a second, which the cap drops first.
	for i := range 5000 {
		now = now.Add(time.Millisecond)
		allow("fast", "flood"+strconv.Itoa(i))
	}
	for _, v := range victims {
		if allow("slow", v) {
			t.Errorf("%s admitted again within its hour: its live entry was dropped", v)
		}
	}
}

// TestSmallCapDropsNothingBelowIt: a store of a few hundred keys at most
// (WithMaxKeys) drops no live entry while it holds fewer than that: 20
// clients of three rules are 60 entries, and each rule admits each client
// once an hour, however the clients' keys fall into the store's shards.
func TestSmallCapDropsNothingBelowIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, maxKeys := range []int{60, 100, 1000} {
		var rules []limiter.Rule
		for _, name := range []string{"a", "b", "c"} {
			rules = append(rules, limiter.Rule{Name: name, Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}})
		}
		lim, err := limiter.New(memstore.Must(memstore.WithMaxKeys(maxKeys)), rules, limiter.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		admitted := 0
		for round := range 3 {
			for c := range 20 {
				for _, r := range rules {
					d, err := lim.Allow(ctx, r.Name, "client"+strconv.Itoa(c))
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						admitted++
					}
				}
			}
			now = now.Add(time.Second * time.Duration(round))
		}
		if admitted != 60 {
			t.Errorf("WithMaxKeys(%d): %d admitted of 20 clients' 3 rules of 1 an hour, want 60", maxKeys, admitted)
		}
	}
}
