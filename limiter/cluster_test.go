package limiter_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// TestCluster runs the behaviour tables, the all-or-nothing stacks, the
// operator controls, settlement, the queue, shadow rules, in-flight limits and the
// concurrency exactness tests on a real 3-master Redis Cluster, directly and
// through go-redis's AutoPipeliner (both faces).
func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ap, err := c.Client.AutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.Close() })
	async, err := c.Client.AsyncAutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { async.Close() })

	t.Run("step tables", func(t *testing.T) {
		for _, base := range bases {
			for _, tc := range tables {
				runTable(t, c.Client, base, tc.alg, tc.steps)
			}
		}
	})

	for _, client := range []struct {
		name string
		rdb  redis.Scripter
	}{{"cluster client", c.Client}, {"autopipeliner", ap}, {"async autopipeliner", async}} {
		store := mustStore(redisstore.New(client.rdb, redisstore.WithCluster(), redisstore.WithMinTTL(time.Hour), redisstore.WithTimeout(5*time.Second)))

		t.Run(client.name+"/stack across slots is all-or-nothing", func(t *testing.T) {
			rules := append(ruletest.Six(10), limiter.Rule{Name: "gate", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}})
			lim, err := limiter.New(store, rules, fixedClock(bases[0]), limiter.WithPrefix("stack-"+client.name[:4]))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				d, err := lim.Decide(ctx, ruletest.Checks(rules, "u", 1)...)
				if err != nil || d.Allowed != (i == 0) {
					t.Fatalf("request %d: %+v %v", i, d, err)
				}
			}
			d, err := lim.Decide(ctx, ruletest.Checks(rules[:6], "u", 0)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range d.Results {
				if r.Remaining != 9 {
					t.Errorf("rule %s: %d remaining after 3 denied stacks, want 9 (refunds exact)", r.Rule, r.Remaining)
				}
			}
		})

		t.Run(client.name+"/operator controls", func(t *testing.T) { operatorTable(t, store, "op-"+client.name[:4]) })
		t.Run(client.name+"/settle across slots", func(t *testing.T) { settleTable(t, store, "settle-"+client.name[:4]) })
		t.Run(client.name+"/queue", func(t *testing.T) { queueTable(t, store, "queue-"+client.name[:4]) })
		t.Run(client.name+"/shadow rules across slots", func(t *testing.T) { shadowTable(t, store, "shadow-"+client.name[:4]) })
		t.Run(client.name+"/concurrency", func(t *testing.T) { concurrencyTable(t, store, "conc-"+client.name[:4]) })
		t.Run(client.name+"/leased global across slots", func(t *testing.T) { leasedFleetTable(t, store, "lease-"+client.name[:4]) })

		t.Run(client.name+"/64 goroutines admit exactly the limit", func(t *testing.T) {
			for i, r := range ruletest.Six(100) {
				lim, err := limiter.New(store, []limiter.Rule{r}, fixedClock(bases[0].Add(time.Duration(i)*time.Minute)),
					limiter.WithPrefix("hot-"+client.name[:4]))
				if err != nil {
					t.Fatal(err)
				}
				if got := ruletest.Hammer(t, 64, 5, func() (limiter.Decision, error) { return lim.Allow(ctx, r.Name, "hot") }); got != 100 {
					t.Errorf("%s: admitted %d, want 100", r.Name, got)
				}
			}
		})

		t.Run(client.name+"/stack across slots under contention", func(t *testing.T) {
			rules := []limiter.Rule{
				{Name: "a", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1000}},
				{Name: "b", Algorithm: algorithms.SlidingLog{Limit: 50, Window: time.Hour}},
				{Name: "c", Algorithm: algorithms.TokenBucket{Capacity: 1000, Rate: 1, Period: time.Hour}},
			}
			lim, err := limiter.New(store, rules, fixedClock(bases[0]), limiter.WithPrefix("mix-"+client.name[:4]))
			if err != nil {
				t.Fatal(err)
			}
			if got := ruletest.Hammer(t, 64, 5, func() (limiter.Decision, error) { return lim.Decide(ctx, ruletest.Checks(rules, "x", 1)...) }); got != 50 {
				t.Errorf("admitted %d stacks, want exactly the binding limit 50", got)
			}
			// Everything the 270 denied stacks consumed was given back.
			d, err := lim.Decide(ctx, limiter.Check{Rule: rules[0].Name, Identity: "x"}, limiter.Check{Rule: rules[2].Name, Identity: "x"})
			if err != nil || d.Results[0].Remaining != 950 || d.Results[1].Remaining != 950 {
				t.Errorf("after refunds: %+v %v, want 950 remaining on a and c", d, err)
			}
		})
	}
}
