package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestPlansPerRequestKeepParamsBounded: plans computed per request (a
// tenant's own quota, say) are as many algorithm values as there are
// quotas; the store keeps the encoded parameters of a bounded number of
// them, as the limiter keeps a bounded number validated, and still decides
// the others.
func TestPlansPerRequestKeepParamsBounded(t *testing.T) {
	_, rdb := redistest.Mini(t)
	st, err := New(rdb, WithCoalescing(false), WithTimeout(time.Minute)) // a loaded machine, the race detector
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(st, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}}},
		limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	const plans = maxParams + 500
	for i := range plans {
		plan := algorithms.FixedWindow{Limit: i + 1, Window: time.Minute}
		d, err := lim.Decide(context.Background(), limiter.Check{Rule: "r", Identity: "tenant", Cost: 1, Plan: plan})
		if err != nil {
			t.Fatalf("plan %d: %v", i, err)
		}
		if !d.Allowed {
			t.Fatalf("plan %d: denied, want allowed (each plan allows more than the ones before)", i)
		}
	}
	n := st.(*redisStore).params.Kept()
	if n > maxParams {
		t.Fatalf("the store keeps the parameters of %d plans, want at most %d", n, maxParams)
	}
}
