package middleware_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// A middleware with a leased rule, built as New's doc says to build one
// that gives its units back at shutdown (NewWithLimiter on a limiter of
// guard.Limits): while it serves, Redis has given out more units than it
// admitted (its pool holds them); once the limiter is closed, a fresh
// unleased check sees exactly the limit less the requests served.
func TestLeasedMiddlewareGivesBackOnClose(t *testing.T) {
	const limit, served = 100, 10
	bucket := algorithms.TokenBucket{Capacity: limit, Rate: 1, Period: time.Hour}
	rules := []middleware.Rule{{Rule: limiter.Rule{Name: "global", Algorithm: bucket, Lease: time.Minute}, Identity: keyfunc.Constant("all")}}
	unleased := []limiter.Rule{{Name: "global", Algorithm: bucket}}
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			prefix := limiter.WithPrefix("close" + b.Name)
			lim, err := limiter.New(mwtest.RedisStore(t, b.Client), guard.Limits(rules), clock(), prefix)
			if err != nil {
				t.Fatal(err)
			}
			mw, err := middleware.NewWithLimiter(lim, rules)
			if err != nil {
				t.Fatal(err)
			}
			h := mw(ok)
			for i := range served {
				if res := do(h, "GET", "/", "203.0.113.9:1"); res.StatusCode != 200 {
					t.Fatalf("request %d: %d", i+1, res.StatusCode)
				}
			}
			peek, err := limiter.New(mwtest.RedisStore(t, b.Client), unleased, clock(), prefix)
			if err != nil {
				t.Fatal(err)
			}
			left := func() int {
				t.Helper()
				d, err := peek.Status(context.Background(), "global", "all")
				if err != nil {
					t.Fatal(err)
				}
				return d.Results[0].Remaining
			}
			if got := left(); got >= limit-served {
				t.Fatalf("before Close: %d left in Redis, want fewer than %d (units held in the pool)", got, limit-served)
			}
			if err := lim.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := left(), limit-served; got != want {
				t.Errorf("after Close: %d left in Redis, want %d", got, want)
			}
		})
	}
}
