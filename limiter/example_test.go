package limiter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// newRedis starts an in-process Redis whose TIME is fixed, and returns the
// Redis store on it, standing in for
// redisstore.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})).
func newRedis() (store.Store, func()) {
	srv, _ := miniredis.Run()
	srv.SetTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) // Redis TIME
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	store, err := redisstore.New(rdb)
	if err != nil {
		panic(err)
	}
	return store, func() { rdb.Close(); srv.Close() }
}

// A per-user GCRA stacked with a global fixed window, decided in one round
// trip. The third request is denied by the per-user rule, and consumes
// nothing of the global one.
func Example() {
	store, stop := newRedis()
	defer stop()

	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "per-user", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 2}},
		{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Minute}},
	})
	if err != nil {
		panic(err)
	}
	for range 3 {
		d, err := lim.Decide(context.Background(),
			limiter.Check{Rule: "per-user", Identity: "alice", Cost: 1},
			limiter.Check{Rule: "global", Identity: "all", Cost: 1})
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%v per-user remaining=%d global remaining=%d retry after %v\n",
			d.Allowed, d.Results[0].Remaining, d.Results[1].Remaining, d.RetryAfter())
	}
	// Output:
	// allowed=true per-user remaining=1 global remaining=999 retry after 0s
	// allowed=true per-user remaining=0 global remaining=998 retry after 0s
	// allowed=false per-user remaining=0 global remaining=998 retry after 1s
}

// A cost above what the rule can ever admit is denied with RetryAfter set to
// algorithms.Never; a cost of 0 peeks.
func ExampleLimiter_Decide() {
	store, stop := newRedis()
	defer stop()

	lim, _ := limiter.New(store, []limiter.Rule{
		{Name: "uploads", Algorithm: algorithms.TokenBucket{Capacity: 100, Rate: 10, Period: time.Second}},
	}, limiter.WithClock(func() time.Time { return time.Unix(1_800_000_000, 0) }))

	for _, cost := range []int{60, 60, 0, 101} {
		d, err := lim.Decide(context.Background(), limiter.Check{Rule: "uploads", Identity: "bob", Cost: cost})
		if err != nil {
			panic(err)
		}
		r := d.Results[0]
		fmt.Printf("cost %3d: allowed=%v remaining=%d impossible=%v\n", cost, r.Allowed, r.Remaining, r.RetryAfter == algorithms.Never)
	}
	// Output:
	// cost  60: allowed=true remaining=40 impossible=false
	// cost  60: allowed=false remaining=40 impossible=false
	// cost   0: allowed=true remaining=40 impossible=false
	// cost 101: allowed=false remaining=40 impossible=true
}

// One rule, cost 1: a job worker that waits when its tenant is over the
// limit.
func ExampleLimiter_Allow() {
	store, stop := newRedis()
	defer stop()
	ctx := context.Background()

	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "per-tenant", Algorithm: algorithms.TokenBucket{Capacity: 2, Rate: 1, Period: time.Second}},
	})
	if err != nil {
		panic(err)
	}
	job := func() error {
		d, err := lim.Allow(ctx, "per-tenant", "acme") // one rule, cost 1
		if err != nil {
			return err // a Redis failure (ErrBackend), never a denial
		}
		if !d.Allowed {
			fmt.Println("wait", d.RetryAfter()) // or requeue the job
			return nil
		}
		fmt.Println("run job")
		return nil
	}
	for range 3 {
		if err := job(); err != nil {
			panic(err)
		}
	}
	// Output:
	// run job
	// run job
	// wait 1s
}

// Operator controls: a ban on every instance, lifted; a client's state
// forgotten; a quota page that consumes nothing.
func ExampleLimiter_Block() {
	store, stop := newRedis()
	defer stop()
	ctx := context.Background()

	admin, err := limiter.New(store, []limiter.Rule{
		{Name: "per-ip", Algorithm: algorithms.SlidingWindow{Limit: 100, Window: time.Minute}, Blockable: true},
	})
	if err != nil {
		panic(err)
	}
	show := func(what string) {
		d, err := admin.Status(ctx, "per-ip", "203.0.113.9")
		if err != nil {
			panic(err)
		}
		r := d.Results[0]
		fmt.Printf("%-8s allowed=%v blocked=%v remaining=%d retry=%v\n", what, r.Allowed, r.Blocked, r.Remaining, r.RetryAfter)
	}
	_, _ = admin.Allow(ctx, "per-ip", "203.0.113.9")
	show("used 1")
	if err := admin.Block(ctx, "per-ip", "203.0.113.9", 24*time.Hour); err != nil { // ban on every instance
		panic(err)
	}
	show("banned")
	if err := admin.Unblock(ctx, "per-ip", "203.0.113.9"); err != nil {
		panic(err)
	}
	show("unbanned")
	if err := admin.Reset(ctx, "per-ip", "203.0.113.9"); err != nil { // forget counters and block
		panic(err)
	}
	show("reset")
	// Output:
	// used 1   allowed=true blocked=false remaining=99 retry=0s
	// banned   allowed=false blocked=true remaining=0 retry=24h0m0s
	// unbanned allowed=true blocked=false remaining=99 retry=0s
	// reset    allowed=true blocked=false remaining=100 retry=0s
}

// Settlement: reserve the most a request can cost, then charge what it
// used once known (tokens generated, say); the rest is given back exactly.
func ExampleLimiter_Settle() {
	store, stop := newRedis()
	defer stop()
	ctx := context.Background()

	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "tokens", Algorithm: algorithms.TokenBucket{Capacity: 10_000, Rate: 1_000, Period: time.Minute}},
	})
	if err != nil {
		panic(err)
	}
	d, err := lim.Decide(ctx, limiter.Check{Rule: "tokens", Identity: "acme", Cost: 4_000}) // max_tokens
	if err != nil || !d.Allowed {
		panic("refused")
	}
	fmt.Println("reserved, remaining", d.Results[0].Remaining)
	used := 1_234 // known once the response is generated
	if _, err := lim.Settle(ctx, d, used); err != nil {
		panic(err)
	}
	st, _ := lim.Status(ctx, "tokens", "acme")
	fmt.Println("settled, remaining", st.Results[0].Remaining)
	// Output:
	// reserved, remaining 6000
	// settled, remaining 8766
}

// A queue instead of refusals: jobs that arrive together run 100 ms apart
// (10 a second), each waiting for its turn; past a 2 s wait they are
// refused.
func ExampleLimiter_Wait() {
	store, stop := newRedis()
	defer stop()
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "export", Algorithm: algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}},
	}, limiter.WithClock(func() time.Time { return start })) // the jobs arrive together
	if err != nil {
		panic(err)
	}
	for range 3 {
		d, err := lim.Wait(context.Background(), limiter.Check{Rule: "export", Identity: "acme", Cost: 1})
		if err != nil {
			panic(err)
		}
		fmt.Printf("ran after waiting %v for its turn, %d turns left\n", d.Results[0].Delay, d.Results[0].Remaining)
	}
	// Output:
	// ran after waiting 0s for its turn, 20 turns left
	// ran after waiting 100ms for its turn, 19 turns left
	// ran after waiting 200ms for its turn, 18 turns left
}

// A leased global rule: the first request takes a lease of 4 units with
// its own, the next four spend it without asking Redis, the sixth takes a
// larger lease (demand went up), and Close gives back what is unspent.
// Remaining counts what Redis has left and what the pool holds.
func ExampleRule_lease() {
	store, stop := newRedis()
	defer stop()
	at := limiter.WithClock(func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) })

	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Minute}, Lease: time.Second},
	}, at)
	if err != nil {
		panic(err)
	}
	for range 6 {
		d, err := lim.Allow(context.Background(), "global", "all")
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%v leased=%d remaining=%d\n", d.Allowed, d.Results[0].Leased, d.Results[0].Remaining)
	}
	if err := lim.Close(); err != nil {
		panic(err)
	}
	d, _ := lim.Status(context.Background(), "global", "all")
	fmt.Printf("after Close, Redis has %d left\n", d.Results[0].Remaining)
	// Output:
	// allowed=true leased=4 remaining=999
	// allowed=true leased=0 remaining=998
	// allowed=true leased=0 remaining=997
	// allowed=true leased=0 remaining=996
	// allowed=true leased=0 remaining=995
	// allowed=true leased=12 remaining=994
	// after Close, Redis has 994 left
}
