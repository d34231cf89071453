package main

import (
	"context"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
	"golang.org/x/time/rate"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// decideFunc decides one request for key: allowed, or an error.
type decideFunc func(ctx context.Context, key string) (bool, error)

// quota is what every contender enforces in a mode: limit per period,
// with a burst of limit for the bucket-style ones.
type quota struct {
	limit  int
	period time.Duration
}

// contender builds a decideFunc for a quota on the clients given.
type contender struct {
	name  string
	redis bool // needs Redis (counted for memory per key)
	build func(env *env, q quota) (decideFunc, error)
}

// env is the Redis clients the contenders run on: a client of pool
// goroutines + 8 and an AutoPipeliner on it.
type env struct {
	rdb *redis.Client
	ap  *redis.AutoPipeliner
}

// newEnv connects to the Redis at addr for goroutines, go-redis's
// ContextTimeoutEnabled set to ctxTimeouts.
func newEnv(addr string, goroutines int, ctxTimeouts bool) (*env, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: goroutines + 8, ContextTimeoutEnabled: ctxTimeouts})
	ap, err := rdb.AutoPipeline()
	if err != nil {
		rdb.Close()
		return nil, err
	}
	return &env{rdb: rdb, ap: ap}, nil
}

// close closes the AutoPipeliner, then the client.
func (e *env) close() {
	e.ap.Close()
	e.rdb.Close()
}

// ours is our limiter on Redis (the AutoPipeliner when pipelined), with
// the store's options and the limiter's.
func ours(name string, alg func(q quota) algorithms.Algorithm, pipelined bool, storeOpts []redisstore.Option, opts ...limiter.Option) contender {
	return contender{name: name, redis: true, build: func(e *env, q quota) (decideFunc, error) {
		var rdb redis.Scripter = e.rdb
		if pipelined {
			rdb = e.ap
		}
		store, err := redisstore.New(rdb, storeOpts...)
		if err != nil {
			return nil, err
		}
		return allowFunc(limiter.New(store, []limiter.Rule{{Name: "r", Algorithm: alg(q)}}, append([]limiter.Option{limiter.WithPrefix(name)}, opts...)...))
	}}
}

// allowFunc decides with lim, one identity per request.
func allowFunc(lim *limiter.Limiter, err error) (decideFunc, error) {
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (bool, error) {
		d, err := lim.Allow(ctx, "r", key)
		return d.Allowed, err
	}, nil
}

func gcra(q quota) algorithms.Algorithm {
	return algorithms.GCRA{Rate: q.limit, Period: q.period, Burst: q.limit}
}

func contenders() []contender {
	fw := func(q quota) algorithms.Algorithm { return algorithms.FixedWindow{Limit: q.limit, Window: q.period} }
	sw := func(q quota) algorithms.Algorithm { return algorithms.SlidingWindow{Limit: q.limit, Window: q.period} }
	sl := func(q quota) algorithms.Algorithm {
		return algorithms.SlidingLog{Limit: min(q.limit, 100_000), Window: q.period} // SlidingLog.Limit is at most 100,000
	}
	tb := func(q quota) algorithms.Algorithm {
		return algorithms.TokenBucket{Capacity: q.limit, Rate: q.limit, Period: q.period}
	}
	lb := func(q quota) algorithms.Algorithm {
		return algorithms.LeakyBucket{Capacity: q.limit, Rate: q.limit, Period: q.period}
	}
	noCache := limiter.WithDenyCache(0, 0)
	return []contender{
		{name: "raw EVALSHA (INCR)", redis: true, build: rawEvalSha(false)},
		ours("ours gcra", gcra, false, nil),
		ours("ours fixed window", fw, false, nil),
		ours("ours sliding window", sw, false, nil),
		ours("ours sliding log", sl, false, nil),
		ours("ours token bucket", tb, false, nil),
		ours("ours leaky bucket", lb, false, nil),
		ours("ours gcra, no deny cache", gcra, false, nil, noCache),
		ours("ours gcra, scripts", gcra, false, []redisstore.Option{redisstore.WithFunctions(false)}),
		ours("ours gcra, one by one", gcra, false, []redisstore.Option{redisstore.WithFunctions(false), redisstore.WithCoalescing(false)}),
		{name: "ours stack of 3", redis: true, build: stackOf3},
		{name: "ours per-key + global", redis: true, build: func(e *env, q quota) (decideFunc, error) {
			return perKeyAndGlobal(e.rdb, q, 0, "pg")
		}},
		{name: "ours per-key + leased global", redis: true, build: func(e *env, q quota) (decideFunc, error) {
			return perKeyAndGlobal(e.rdb, q, globalLease, "plg")
		}},
		{name: "redis_rate (gcra)", redis: true, build: redisRate(false)},
		{name: "ulule (fixed window)", redis: true, build: ululeLimiter},
		{name: "throttled (gcra)", redis: true, build: throttledLimiter},
		{name: "raw EVALSHA, autopipelined", redis: true, build: rawEvalSha(true)},
		ours("ours gcra, autopipelined", gcra, true, nil),
		{name: "redis_rate, autopipelined", redis: true, build: redisRate(true)},
		{name: "ours memstore (gcra)", build: memGCRA},
		{name: "httprate in memory", build: httprateLocal},
		{name: "go-limiter memorystore", build: goLimiterMemory},
		{name: "x/time/rate per key", build: xTimeRatePerKey},
	}
}

func rawEvalSha(pipelined bool) func(e *env, q quota) (decideFunc, error) {
	script := redis.NewScript(`return redis.call("INCR", KEYS[1])`)
	return func(e *env, q quota) (decideFunc, error) {
		var rdb redis.Scripter = e.rdb
		if pipelined {
			rdb = e.ap
		}
		return func(ctx context.Context, key string) (bool, error) {
			return true, script.Run(ctx, rdb, []string{"raw:" + key}).Err()
		}, nil
	}
}

func stackOf3(e *env, q quota) (decideFunc, error) {
	store, err := redisstore.New(e.rdb)
	if err != nil {
		return nil, err
	}
	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "per-ip", Algorithm: gcra(q)},
		{Name: "per-user", Algorithm: algorithms.TokenBucket{Capacity: q.limit, Rate: q.limit, Period: q.period}},
		{Name: "per-route", Algorithm: algorithms.FixedWindow{Limit: q.limit, Window: q.period}},
	}, limiter.WithPrefix("stack"))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (bool, error) {
		d, err := lim.Decide(ctx,
			limiter.Check{Rule: "per-ip", Identity: key, Cost: 1},
			limiter.Check{Rule: "per-user", Identity: key, Cost: 1},
			limiter.Check{Rule: "per-route", Identity: key, Cost: 1})
		return d.Allowed, err
	}, nil
}

// globalLease is the lease of the leased global rule.
const globalLease = 500 * time.Millisecond

// globalTag is the hash tag of the global rule's key.
const globalTag = "{global:all}"

// perKeyAndGlobal stacks a per-key GCRA with a global fixed window too high
// to deny (1<<30 a second), leased for lease (0: not leased): the global
// rule's overhead on top of the per-key rule.
func perKeyAndGlobal(rdb redis.Scripter, q quota, lease time.Duration, prefix string) (decideFunc, error) {
	store, err := redisstore.New(rdb)
	if err != nil {
		return nil, err
	}
	lim, err := limiter.New(store, []limiter.Rule{
		{Name: "key", Algorithm: gcra(q)},
		{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1 << 30, Window: time.Second}, Lease: lease},
	}, limiter.WithPrefix(prefix))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (bool, error) {
		d, err := lim.Decide(ctx, limiter.Check{Rule: "key", Identity: key, Cost: 1}, limiter.Check{Rule: "global", Identity: "all", Cost: 1})
		return d.Allowed, err
	}, nil
}

func redisRate(pipelined bool) func(e *env, q quota) (decideFunc, error) {
	return func(e *env, q quota) (decideFunc, error) {
		var l *redis_rate.Limiter
		if pipelined {
			l = redis_rate.NewLimiter(apRediser{e.ap, e.rdb})
		} else {
			l = redis_rate.NewLimiter(e.rdb)
		}
		limit := redis_rate.Limit{Rate: q.limit, Burst: q.limit, Period: q.period}
		return func(ctx context.Context, key string) (bool, error) {
			res, err := l.Allow(ctx, key, limit)
			if err != nil {
				return false, err
			}
			return res.Allowed > 0, nil
		}, nil
	}
}

// apRediser gives redis_rate an AutoPipeliner for its script calls (Del,
// which it uses only for Reset, goes to the plain client).
type apRediser struct {
	*redis.AutoPipeliner
	rdb interface {
		Del(ctx context.Context, keys ...string) *redis.IntCmd
	}
}

func (a apRediser) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return a.rdb.Del(ctx, keys...)
}

func ululeLimiter(e *env, q quota) (decideFunc, error) {
	store, err := ulredis.NewStoreWithOptions(e.rdb, ulule.StoreOptions{Prefix: "ulule", MaxRetry: 3})
	if err != nil {
		return nil, err
	}
	l := ulule.New(store, ulule.Rate{Period: q.period, Limit: int64(q.limit)})
	return func(ctx context.Context, key string) (bool, error) {
		c, err := l.Get(ctx, key)
		return !c.Reached, err
	}, nil
}

func throttledLimiter(e *env, q quota) (decideFunc, error) {
	store, err := goredisstore.NewCtx(e.rdb, "throttled:")
	if err != nil {
		return nil, err
	}
	perPeriod := throttled.Rate{}
	if q.period == time.Second {
		perPeriod = throttled.PerSec(q.limit)
	} else {
		perPeriod = throttled.PerDuration(q.limit, q.period)
	}
	rl, err := throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{MaxRate: perPeriod, MaxBurst: q.limit - 1})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (bool, error) {
		limited, _, err := rl.RateLimitCtx(ctx, key, 1)
		return !limited, err
	}, nil
}

func memGCRA(_ *env, q quota) (decideFunc, error) {
	return allowFunc(limiter.New(memstore.Must(), []limiter.Rule{{Name: "r", Algorithm: gcra(q)}}))
}

// httprateLocal is httprate's in-memory sliding window counter, checked and
// incremented under one lock as its RateLimiter does.
func httprateLocal(_ *env, q quota) (decideFunc, error) {
	counter := httprate.NewLocalLimitCounter(q.period)
	var mu sync.Mutex
	return func(ctx context.Context, key string) (bool, error) {
		now := time.Now().UTC().Truncate(q.period)
		mu.Lock()
		defer mu.Unlock()
		cur, prev, err := counter.Get(key, now, now.Add(-q.period))
		if err != nil {
			return false, err
		}
		elapsed := time.Since(now)
		rate := float64(prev)*float64(q.period-elapsed)/float64(q.period) + float64(cur)
		if int(rate) >= q.limit {
			return false, nil
		}
		return true, counter.IncrementBy(key, now, 1)
	}, nil
}

// goLimiterMemory is sethvargo/go-limiter's in-memory token bucket store.
func goLimiterMemory(_ *env, q quota) (decideFunc, error) {
	store, err := memorystore.New(&memorystore.Config{Tokens: uint64(q.limit), Interval: q.period})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (bool, error) {
		_, _, _, ok, err := store.Take(ctx, key)
		return ok, err
	}, nil
}

// xTimeRatePerKey is golang.org/x/time/rate with one limiter per key in a
// sync.Map, as services commonly build it (no expiry).
func xTimeRatePerKey(_ *env, q quota) (decideFunc, error) {
	var limiters sync.Map
	every := rate.Every(q.period / time.Duration(q.limit))
	return func(_ context.Context, key string) (bool, error) {
		l, ok := limiters.Load(key)
		if !ok {
			l, _ = limiters.LoadOrStore(key, rate.NewLimiter(every, q.limit))
		}
		return l.(*rate.Limiter).Allow(), nil
	}, nil
}
