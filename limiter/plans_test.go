package limiter_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// A client on a free plan (2 an hour) uses it up, is refused, then upgrades
// to a paid plan (5 an hour) in the same window. What the upgrade gives at
// once follows each algorithm's state: counts carry over (the windows and
// the log: 3 more now), a leaky bucket's level carries over (3 more), a
// token bucket's tokens carry over (none left: it refills at the new
// rate), GCRA's debt is time (a full hour at the new rate: none more). A
// bucket whose period changes starts afresh (its stored level is scaled by
// the period, and is never read under another). Then a downgrade back to
// the free plan: nothing more.
func TestLimitsPerCheck(t *testing.T) {
	stores := map[string]func(t *testing.T) limiter.Store{
		"memstore": func(*testing.T) limiter.Store { return memstore.Must() },
	}
	for _, b := range redistest.Backends(t) {
		stores[b.Name] = func(t *testing.T) limiter.Store {
			return mustStore(limiter.NewRedisStore(b.Client, limiter.WithMinTTL(time.Hour)))
		}
	}
	for _, tc := range []struct {
		free, paid algorithms.Algorithm
		upgrade    int // admitted at once after the upgrade
	}{
		{algorithms.FixedWindow{Limit: 2, Window: time.Hour}, algorithms.FixedWindow{Limit: 5, Window: time.Hour}, 3},
		{algorithms.FixedWindow{Limit: 2, Window: time.Hour, Anchored: true}, algorithms.FixedWindow{Limit: 5, Window: time.Hour, Anchored: true}, 3},
		{algorithms.SlidingWindow{Limit: 2, Window: time.Hour}, algorithms.SlidingWindow{Limit: 5, Window: time.Hour}, 3},
		{algorithms.SlidingLog{Limit: 2, Window: time.Hour}, algorithms.SlidingLog{Limit: 5, Window: time.Hour}, 3},
		{algorithms.LeakyBucket{Capacity: 2, Rate: 2, Period: time.Hour}, algorithms.LeakyBucket{Capacity: 5, Rate: 5, Period: time.Hour}, 3},
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: time.Hour}, algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: time.Hour}, 0},
		{algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: time.Hour}, algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: 30 * time.Minute}, 5},
		{algorithms.GCRA{Rate: 2, Period: time.Hour, Burst: 2}, algorithms.GCRA{Rate: 5, Period: time.Hour, Burst: 5}, 0},
	} {
		for name, store := range stores {
			now := bases[0]
			lim, err := limiter.NewWithStore(store(t), []limiter.Rule{{Name: "api", Algorithm: tc.free}},
				limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(fmt.Sprintf("plan%d", time.Now().UnixNano())),
				limiter.WithDenyCache(100, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			admit := func(alg algorithms.Algorithm, n int) (admitted int, last limiter.Decision) {
				for range n {
					d, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "acme", Cost: 1, Algorithm: alg})
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						admitted++
					}
					last = d
				}
				return admitted, last
			}
			if got, _ := admit(tc.free, 3); got != 2 {
				t.Errorf("%v on %s: free plan admitted %d of 3, want 2", tc.free, name, got)
			}
			got, last := admit(tc.paid, 6)
			if got != tc.upgrade || last.Results[0].Policy != algorithms.PolicyOf(tc.paid) || last.Results[0].Limit != algorithms.PolicyOf(tc.paid).Quota {
				t.Errorf("%v -> %v on %s: upgrade admitted %d at once, want %d; reported %+v", tc.free, tc.paid, name, got, tc.upgrade, last.Results[0])
			}
			if got, _ := admit(tc.free, 2); got != 0 {
				t.Errorf("%v on %s: downgrade admitted %d, want 0", tc.free, name, got)
			}
		}
	}
}

// A per-check algorithm is validated when first used, with an error naming
// the rule; the deny cache never answers one plan with another's denial.
func TestPerCheckAlgorithmErrorsAndDenyCache(t *testing.T) {
	_, c := redistest.Mini(t)
	lim := must(limiter.New(c, []limiter.Rule{{Name: "api", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}},
		limiter.WithClock(func() time.Time { return bases[0] }), limiter.WithMinTTL(time.Hour)))
	_, err := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "a", Cost: 1, Algorithm: algorithms.GCRA{}})
	if !errors.Is(err, limiter.ErrCheck) || !errors.Is(err, algorithms.ErrInvalid) || !strings.Contains(err.Error(), `rule "api"`) {
		t.Errorf("invalid plan: %v, want ErrCheck naming the rule and the field", err)
	}
	free := algorithms.FixedWindow{Limit: 1, Window: time.Hour}
	paid := algorithms.FixedWindow{Limit: 3, Window: time.Hour}
	for i, want := range []bool{true, false, false} { // the third is the deny cache's
		if d, _ := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "a", Cost: 1, Algorithm: free}); d.Allowed != want || d.Cached != (i == 2) {
			t.Fatalf("free request %d: %+v", i, d)
		}
	}
	if d, _ := lim.Decide(ctx, limiter.Check{Rule: "api", Identity: "a", Cost: 1, Algorithm: paid}); !d.Allowed || d.Cached {
		t.Errorf("paid request after free denials: %+v, want Redis to admit it", d)
	}
}
