package limiter_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// apiLimiter is a limiter with one rule "api" of alg on store, at the
// clock now, under prefix.
func apiLimiter(t *testing.T, store store.Store, alg algorithms.Algorithm, now time.Time, prefix string) *limiter.Limiter {
	t.Helper()
	lim, err := limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: alg}}, fixedClock(now), limiter.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// take asks lim for n requests of cost 1 by identity on rule "api" and
// counts the admitted ones.
func take(t *testing.T, lim *limiter.Limiter, identity string, n int) int {
	t.Helper()
	admitted := 0
	for range n {
		d, err := lim.Allow(ctx, "api", identity)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	return admitted
}

// apiLeft is what rule "api" reports left for identity, consuming
// nothing.
func apiLeft(t *testing.T, lim *limiter.Limiter, identity string) int {
	t.Helper()
	d, err := lim.Status(ctx, "api", identity)
	if err != nil {
		t.Fatal(err)
	}
	return d.Results[0].Remaining
}

// A reload replaces a limiter's rules: the rule keeps its name and its
// counts, as a plan change does. 60 admitted under 100 a minute leave 140
// under 200 a minute, whether the new limiter is built after the old one
// is closed or while it still serves, and whenever the collector runs.
func TestReloadKeepsCounts(t *testing.T) {
	for name, store := range everyStore(t) {
		for _, closeFirst := range []bool{true, false} {
			prefix := fmt.Sprintf("reload%d", time.Now().UnixNano())
			old := apiLimiter(t, store, algorithms.FixedWindow{Limit: 100, Window: time.Minute}, bases[1], prefix)
			if got := take(t, old, "acme", 60); got != 60 {
				t.Fatalf("%s: admitted %d of 60 under 100", name, got)
			}
			if closeFirst {
				if err := old.Close(); err != nil {
					t.Fatal(err)
				}
			}
			lim, err := limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: algorithms.FixedWindow{Limit: 200, Window: time.Minute}}},
				fixedClock(bases[1]), limiter.WithPrefix(prefix))
			if err != nil {
				t.Errorf("%s, old limiter closed first %v: reload refused: %v", name, closeFirst, err)
				continue
			}
			if got := apiLeft(t, lim, "acme"); got != 140 {
				t.Errorf("%s, old limiter closed first %v: %d remaining after the reload, want 140", name, closeFirst, got)
			}
			if got := apiLeft(t, old, "acme"); got != 40 {
				t.Errorf("%s: the old limiter reports %d remaining, want 40", name, got)
			}
		}
	}
}

// quota3 are algorithms of every kind that admit 3 at once and refill
// too slowly to matter.
var quota3 = []algorithms.Algorithm{
	algorithms.FixedWindow{Limit: 3, Window: time.Hour},
	algorithms.SlidingWindow{Limit: 3, Window: time.Hour},
	algorithms.SlidingLog{Limit: 3, Window: time.Hour},
	algorithms.TokenBucket{Capacity: 3, Rate: 1, Period: time.Hour},
	algorithms.LeakyBucket{Capacity: 3, Rate: 1, Period: time.Hour},
	algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 3},
	algorithms.Queue{Rate: 1, Period: time.Hour, MaxDelay: 2 * time.Hour},
	algorithms.Concurrency{Limit: 3, TTL: time.Hour},
}

// A table of limiters, one per algorithm, all naming their rule "api" on
// one store: each constructs, and each counts apart from the others (their
// keys differ).
func TestOneRuleNamePerAlgorithm(t *testing.T) {
	for name, store := range everyStore(t) {
		prefix := fmt.Sprintf("names%d", time.Now().UnixNano())
		lims := make([]*limiter.Limiter, len(quota3))
		for i, alg := range quota3 {
			lim, err := limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: alg}}, fixedClock(bases[1]), limiter.WithPrefix(prefix))
			if err != nil {
				t.Fatalf("%s: %v beside the others: %v", name, alg, err)
			}
			lims[i] = lim
		}
		for i, lim := range lims {
			if got := take(t, lim, "acme", 4); got != 3 {
				t.Errorf("%s: %v admitted %d of 4, want 3", name, quota3[i], got)
			}
		}
	}
}

// Limiters that name one rule share its state when their keys are equal
// and nothing when they differ, whether they reach Redis through one
// client or two: a fixed window of 5 an hour and one of 10 share a count
// (5 taken by the first leave 5 to the second), and GCRA beside them
// counts apart. got is 1 per limiter built, then the three counts.
func TestTwoClientsAnswerAsOne(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		second := redis.NewClient(&redis.Options{Addr: b.Client.Options().Addr, MaxRetries: -1})
		t.Cleanup(func() { _ = second.Close() })
		for _, clients := range [][2]*redis.Client{{b.Client, b.Client}, {b.Client, second}} {
			prefix := fmt.Sprintf("clients%d", time.Now().UnixNano())
			var got []int
			lims := make([]*limiter.Limiter, 0, 3)
			for i, alg := range []algorithms.Algorithm{
				algorithms.FixedWindow{Limit: 5, Window: time.Hour},
				algorithms.FixedWindow{Limit: 10, Window: time.Hour},
				algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 4},
			} {
				store := mustStore(redisstore.New(clients[i%2]))
				lim, err := limiter.New(store, []limiter.Rule{{Name: "api", Algorithm: alg}}, fixedClock(bases[1]), limiter.WithPrefix(prefix))
				if err != nil {
					got = append(got, 0)
					continue
				}
				got = append(got, 1)
				lims = append(lims, lim)
			}
			if len(lims) == 3 {
				got = append(got, take(t, lims[0], "acme", 6), apiLeft(t, lims[1], "acme"), take(t, lims[2], "acme", 5))
			}
			if want := []int{1, 1, 1, 5, 5, 4}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, one client %v: built, then admitted by the first, left to the second, admitted by GCRA: %v, want %v",
					b.Name, clients[0] == clients[1], got, want)
			}
		}
	}
}
