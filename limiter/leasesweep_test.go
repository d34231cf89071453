package limiter_test

import (
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// TestSweeperGivesBackAnExpiredLease: on the local clock (the sweeper
// runs only without WithClock), the units a lease holds beyond what was
// spent go back to the store once the lease expires, while the limiter is
// still open and nothing asks for the pool again; Close then has nothing
// left to give back. On every store.
func TestSweeperGivesBackAnExpiredLease(t *testing.T) {
	alg := algorithms.FixedWindow{Limit: 1000, Window: time.Hour, Anchored: true}
	stores := map[string]store.Store{"memstore": memstore.Must()}
	for _, b := range redistest.Backends(t) {
		// A long timeout: the test polls the store for up to 10 s, and
		// a slow moment of a loaded machine is not what it is about.
		stores[b.Name] = mustStore(redisstore.New(b.Client, exactnessTimeout))
	}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			prefix := limiter.WithPrefix("sweep")
			lim := newLimiter(t, s, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: 150 * time.Millisecond}}, prefix)
			defer lim.Close()
			peeker := newLimiter(t, s, []limiter.Rule{{Name: "global", Algorithm: alg}}, prefix)
			d, err := lim.Allow(ctx, "global", "all")
			if err != nil || !d.Allowed {
				t.Fatalf("the first request: %v, %v", d.Allowed, err)
			}
			if got := remaining(t, peeker, "all"); got >= 999 {
				t.Fatalf("the store has %d left after one request: no lease beyond it was taken", got)
			}
			left := 0
			for range 500 {
				if left = remaining(t, peeker, "all"); left == 999 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if left != 999 {
				t.Fatalf("at least 10 s after the request the store has %d left, want 999: the expired lease's units were not given back before Close", left)
			}
			if err := lim.Close(); err != nil {
				t.Fatal(err)
			}
			if got := remaining(t, peeker, "all"); got != 999 {
				t.Errorf("after Close the store has %d left, want 999 (one request admitted)", got)
			}
		})
	}
}
