package limiter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestPlansKeptAreBounded: a limiter keeps at most maxPlans plans
// validated, so that plans computed per request (a tenant's own quota
// from a database, say) cannot grow it without bound; a plan past the
// bound, valid or not, decides as a kept one does.
func TestPlansKeptAreBounded(t *testing.T) {
	ctx := context.Background()
	lim, err := New(memstore.Must(), []Rule{{Name: "api", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	for i := range maxPlans + 500 {
		plan := algorithms.FixedWindow{Limit: 10 + i, Window: time.Minute}
		d, err := lim.Decide(ctx, Check{Rule: "api", Identity: "tenant", Cost: 1, Plan: plan})
		if err != nil || !d.Allowed || d.Results[0].Policy.Quota != plan.Limit {
			t.Fatalf("plan %d: %+v, %v", i, d, err)
		}
	}
	kept := lim.algos.Kept()
	if kept > maxPlans {
		t.Errorf("%d plans kept, want at most %d", kept, maxPlans)
	}
	_, err = lim.Decide(ctx, Check{Rule: "api", Identity: "tenant", Cost: 1, Plan: algorithms.FixedWindow{Limit: -1, Window: time.Minute}})
	if !errors.Is(err, ErrCheck) {
		t.Errorf("an invalid plan past the bound: %v, want ErrCheck", err)
	}
}
