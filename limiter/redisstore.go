package limiter

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/lua"
)

// RedisStore is a Store on Redis: each Decide is one run of the decision
// script (EVALSHA, or EVAL after NOSCRIPT), so all its checks are decided
// atomically in one round trip. rdb may be any redis.Scripter.
func RedisStore(rdb redis.Scripter, opts ...RedisOption) Store {
	s := &redisStore{rdb: rdb, minTTL: lua.MinTTL(0)}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// RedisOption configures RedisStore.
type RedisOption func(*redisStore)

// MinTTL makes every written key live at least d (by default a key lives
// exactly as long as its state matters, at least 1 ms). Key TTLs run on the
// Redis server's clock: set it when a passed-in clock (WithClock) runs
// slower than real time, as in tests at fixed instants.
func MinTTL(d time.Duration) RedisOption {
	return func(s *redisStore) { s.minTTL = lua.MinTTL(d) }
}

type redisStore struct {
	rdb    redis.Scripter
	minTTL string
	params sync.Map // algorithms.Algorithm -> lua.Params, encoded once
}

func (s *redisStore) paramsOf(alg algorithms.Algorithm) (lua.Params, error) {
	if p, ok := s.params.Load(alg); ok {
		return p.(lua.Params), nil
	}
	p, err := lua.ParamsOf(alg)
	if err == nil {
		s.params.Store(alg, p)
	}
	return p, err
}

func (s *redisStore) Decide(ctx context.Context, now time.Time, checks []StoreCheck, results []algorithms.Result) (bool, error) {
	keys := make([]string, len(checks))
	args := make([]any, 2, 2+lua.ArgsPerRule*len(checks))
	args[0], args[1] = lua.Now(now), s.minTTL
	for i, c := range checks {
		p, err := s.paramsOf(c.Algorithm)
		if err != nil {
			return false, err
		}
		keys[i] = c.Key
		args = append(args, p[0], p[1], p[2], p[3], c.Cost)
	}
	reply, err := lua.Script.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return false, err
	}
	r, err := lua.ParseReply(reply, results, nil)
	return r.Allowed, err
}
