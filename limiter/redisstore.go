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
//
// On Redis Cluster (a *redis.ClusterClient, or any client with the Cluster
// option) checks are grouped by hash slot, and on a *redis.Ring by hash tag
// (a Ring runs a script on its first key's shard). Each group is one atomic
// script run. When a stack spans several slots, the first group reads the clock
// and the others decide at the same instant, concurrently; if any group
// denies, the groups that consumed give it back (refund.lua). This never
// admits more than the limits allow, but a request that races a refund may
// be denied where an atomic decision would have admitted it, and a refund
// lost to a network failure leaves its consumption in place (stricter,
// never looser). After a network error the store asks the cluster client
// to reload the topology, so a failed-over master is left quickly.
func RedisStore(rdb redis.Scripter, opts ...RedisOption) Store {
	s := &redisStore{rdb: rdb, minTTL: lua.MinTTL(0), honoursDeadline: honoursDeadline(rdb)}
	switch rdb.(type) {
	case *redis.ClusterClient:
		s.shards = bySlot
	case *redis.Ring:
		s.shards = byTag
	}
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

// Cluster makes the store group checks by hash slot, as on Redis Cluster.
// It is automatic for *redis.ClusterClient; set it for clients that hide
// one, such as a cluster's AutoPipeliner.
func Cluster() RedisOption {
	return func(s *redisStore) { s.shards = bySlot }
}

// sharding says how a client spreads keys over servers.
type sharding int

const (
	oneServer sharding = iota
	bySlot             // Redis Cluster: CRC16 hash slots
	byTag              // go-redis Ring: consistent hashing of hash tags
)

type redisStore struct {
	rdb             redis.Scripter
	minTTL          string
	shards          sharding
	honoursDeadline bool
	params          sync.Map // algorithms.Algorithm -> lua.Params, encoded once
}

// boundIO makes a plain *redis.Client's socket reads and writes stop after
// d by deciding through rdb.WithTimeout(d), a clone that shares its pool:
// the deadline then needs no goroutine per call. (Hooks added to the client
// after this are not seen by the clone.) Only for stores the Limiter made.
func (s *redisStore) boundIO(d time.Duration) {
	if c, ok := s.rdb.(*redis.Client); ok && !s.honoursDeadline {
		s.rdb, s.honoursDeadline = c.WithTimeout(d), true
	}
}

// honoursDeadline reports whether rdb's socket I/O stops at the context's
// deadline. go-redis does so only with ContextTimeoutEnabled; otherwise it
// waits for its ReadTimeout (3 s by default).
func honoursDeadline(rdb redis.Scripter) bool {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

type outcome struct {
	allowed bool
	err     error
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

// Decide implements Store. The call returns by ctx's deadline even when
// the client would wait longer (see honoursDeadline): the request then
// fails with the context's error while the call finishes in the
// background, bounded by the client's own timeouts.
func (s *redisStore) Decide(ctx context.Context, now time.Time, checks []StoreCheck, results []algorithms.Result) (bool, error) {
	if _, ok := ctx.Deadline(); s.honoursDeadline || !ok {
		return s.decide(ctx, now, checks, results)
	}
	own := make([]algorithms.Result, len(results)) // the late call must not write into results
	copy(own, results)
	done := make(chan outcome, 1)
	go func() {
		allowed, err := s.decide(ctx, now, checks, own)
		done <- outcome{allowed, err}
	}()
	select {
	case o := <-done:
		copy(results, own)
		return o.allowed, o.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (s *redisStore) decide(ctx context.Context, now time.Time, checks []StoreCheck, results []algorithms.Result) (bool, error) {
	var groups [][]int
	switch s.shards {
	case bySlot:
		groups = groupBy(checks, slot)
	case byTag:
		groups = groupBy(checks, hashTag)
	}
	if len(groups) > 1 {
		return s.decideAcrossShards(ctx, now, checks, results, groups)
	}
	r, err := s.run(ctx, lua.Now(now), checks, results, nil)
	return r.Allowed, err
}

// run decides checks in one script run.
func (s *redisStore) run(ctx context.Context, now string, checks []StoreCheck, results []algorithms.Result, tokens []int64) (lua.Reply, error) {
	keys := make([]string, len(checks))
	args := make([]any, 2, 2+lua.ArgsPerRule*len(checks))
	args[0], args[1] = now, s.minTTL
	var mask lua.Mask
	for i, c := range checks {
		p, err := s.paramsOf(c.Algorithm)
		if err != nil {
			return lua.Reply{}, err
		}
		keys[i] = c.Key
		args = append(args, p.Args[0], p.Args[1], p.Args[2], p.Args[3], lua.Cost(c.Cost))
		mask |= p.Mask()
	}
	reply, err := lua.Script(mask).Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		s.reloadTopology(err)
		return lua.Reply{}, err
	}
	return lua.ParseReply(reply, results, tokens)
}
