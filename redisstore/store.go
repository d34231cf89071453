package redisstore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/memo"
	"github.com/seed-bff0c9e1/ratelimit/internal/options"
	"github.com/seed-bff0c9e1/ratelimit/internal/script"
	"github.com/seed-bff0c9e1/ratelimit/internal/transport"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// redisStore is the store.Store on Redis (see the package documentation).
// It is safe for concurrent use.
type redisStore struct {
	rdb             redis.Scripter
	client          redis.Scripter // the client passed in, whose server holds the state
	timeout         time.Duration
	minTTL          any // script.MinTTL, boxed once for command lines
	shards          sharding
	honoursDeadline bool
	coalesced       bool                                              // rdb is a Coalescer (or Nodes): it bounds each call itself
	caller          *script.Caller                                    // functions or scripts
	params          memo.Bounded[algorithms.Algorithm, script.Params] // boxed once, for maxParams values
	dials           *transport.DialWatch                              // nil unless the client is one server's *redis.Client
}

var _ store.Remote = (*redisStore)(nil)

// sharding says how a client spreads keys over servers.
type sharding int

const (
	oneServer sharding = iota
	bySlot             // Redis Cluster: CRC16 hash slots
	byTag              // go-redis Ring: consistent hashing of hash tags
)

// New returns a store.Store on rdb, safe for concurrent use, that is also
// a store.Remote (a limiter on it gets a breaker and a deny cache). rdb is
// a *redis.Client, *redis.ClusterClient, *redis.Ring, a failover client,
// an AutoPipeliner, or any other redis.Scripter. It validates the options and does not touch Redis: the
// scripts are loaded on first use, so a store starts while Redis is down.
func New(rdb redis.Scripter, opts ...Option) (store.Store, error) {
	if rdb == nil || isNilPointer(rdb) {
		return nil, fmt.Errorf("%w: nil Redis client", ratelimit.ErrConfig)
	}
	cfg := defaults()
	if err := options.Apply(&cfg, opts); err != nil {
		return nil, err
	}
	s := &redisStore{rdb: rdb, client: rdb, timeout: cfg.timeout, minTTL: script.MinTTL(cfg.minTTL), honoursDeadline: honoursDeadline(rdb)}
	s.params.Max = maxParams
	switch rdb.(type) {
	case *redis.ClusterClient:
		s.shards = bySlot
	case *redis.Ring:
		s.shards = byTag
	}
	if cfg.cluster {
		s.shards = bySlot
	}
	switch c := rdb.(type) {
	case *redis.Client:
		if s.shards == oneServer {
			s.dials = transport.WatchDials(c) // on c itself: its connection pool dials through c's hooks, not the clone's
		}
		if !s.honoursDeadline {
			c = transport.Bounded(c, cfg.timeout)
		}
		s.rdb, s.honoursDeadline = c, true
		if cfg.coalesce {
			co := transport.NewCoalescer(transport.Client{Client: c}, cfg.timeout, s.dials)
			if s.shards == bySlot { // a cluster node's client (WithCluster): its batches span slots
				co.SpanSlots()
			}
			s.rdb, s.coalesced = co, true
		}
	case *redis.ClusterClient:
		if cfg.coalesce {
			s.rdb, s.honoursDeadline, s.coalesced = transport.ClusterNodes(c, cfg.timeout), true, true
		}
	case *redis.Ring:
		if cfg.coalesce && !cfg.cluster {
			s.rdb, s.honoursDeadline, s.coalesced = transport.RingNodes(c, cfg.timeout), true, true
		}
	case *redis.AutoPipeliner:
		if d := transport.DeferredFace(c); d != nil {
			s.rdb, s.honoursDeadline = d, true
			if cfg.coalesce && s.shards == oneServer {
				// No dial hook: a hooked client's AutoPipeliner runs its hooks per batch.
				s.rdb, s.coalesced = transport.NewCoalescer(d, cfg.timeout, nil), true
			}
		}
	}
	s.caller = script.NewCaller(s.rdb, cfg.functions, cfg.timeout)
	return s, nil
}

// Remote implements store.Remote: the store's timeout (see WithTimeout).
func (s *redisStore) Remote() (timeout time.Duration) { return s.timeout }

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
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

// maxParams bounds the algorithm values whose Params a store keeps (see
// paramsOf), as the limiter bounds the plans it keeps validated.
const maxParams = 4096

// paramsOf is c's part of the scripts' arguments: its Params, as the
// Limiter encoded them, boxed once per algorithm value for the command
// lines, for the first maxParams values, and encoded on each use past
// them, so that plans computed per request (a tenant's own quota, say)
// cannot grow the store without bound.
func (s *redisStore) paramsOf(c *store.Check) (script.Params, error) {
	return s.params.Get(c.Algorithm, func(algorithms.Algorithm) (script.Params, error) { return script.Encode(c.Params) })
}

// outcome is a call's result, from the goroutine that made it (see within).
type outcome[T any] struct {
	v   T
	err error
}

// bind bounds a store call by the store's timeout, or the caller's
// deadline if sooner. A Coalescer bounds each of its calls to Redis so
// itself, from when it reaches it (no timer per call); on other clients
// that honour deadlines the deadline is the context's.
func (s *redisStore) bind(ctx context.Context) transport.Bound {
	if s.coalesced {
		return transport.Bound{Ctx: ctx}
	}
	return s.dials.Bind(ctx, transport.Deadline(ctx, s.timeout))
}

// within runs f within the store's timeout. On a client that would wait
// longer (see honoursDeadline) it returns at the timeout all the same: the
// call then fails with the context's error while f finishes in the
// background, bounded by the client's own timeouts.
func within[T any](s *redisStore, ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	if s.honoursDeadline {
		b := s.bind(ctx)
		v, err := f(b.Ctx)
		return v, s.dials.Cause(b.Ended(err))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	done := make(chan outcome[T], 1)
	go func() {
		v, err := f(ctx)
		done <- outcome[T]{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Decide implements store.Store within the store's timeout: within,
// without its closure on the usual clients.
func (s *redisStore) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	if !s.honoursDeadline {
		// within may return while its call goes on: the call has slices
		// of its own, copied back once it has returned.
		checks, own := slices.Clone(checks), make([]store.Result, len(results))
		v, err := within(s, ctx, func(ctx context.Context) (store.Verdict, error) { return s.decide(ctx, now, checks, own) })
		if err == nil {
			copy(results, own)
		}
		return v, err
	}
	b := s.bind(ctx)
	v, err := s.decide(b.Ctx, now, checks, results)
	return v, s.dials.Cause(b.Ended(err))
}

// Refund implements store.Store within the store's timeout: one refund.lua run
// per shard, concurrently. Refunds that went out in several round trips
// fail with a *fault.Refunds, which says which failed; a dial watch (and
// its reading of the error, in within) is only on one server's client,
// where they go out in one.
func (s *redisStore) Refund(ctx context.Context, now, at time.Time, refunds []store.Refund) error {
	instant := "" // unknown: refund.lua gives back what slot ids name alone
	if !at.IsZero() {
		instant = strconv.FormatInt(at.UnixMicro(), 10)
	}
	_, err := within(s, ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.refund(ctx, script.Now(now), instant, refunds)
	})
	return err
}

// Block implements store.Store within the store's timeout (block.lua).
func (s *redisStore) Block(ctx context.Context, now time.Time, key store.Key, d time.Duration) error {
	_, err := within(s, ctx, func(ctx context.Context) (any, error) {
		return s.caller.Run(ctx, script.Block(), script.CallOf([]string{key.String()}, script.Now(now), s.minTTL, d.Microseconds()))
	})
	return err
}

// Reset implements store.Store within the store's timeout (delete.lua).
func (s *redisStore) Reset(ctx context.Context, now time.Time, keys []store.Key, marks []store.Mark) (int, error) {
	names := make([]string, 0, len(keys)+len(marks))
	for _, k := range keys {
		names = append(names, k.String())
	}
	args := []any{script.Now(now), s.minTTL}
	for _, m := range marks {
		if us := m.TTL.Microseconds(); us > 0 {
			names = append(names, m.Key.String())
			args = append(args, us)
		}
	}
	v, err := within(s, ctx, func(ctx context.Context) (any, error) {
		return s.caller.Run(ctx, script.Delete(), script.CallOf(names, args...))
	})
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%w: delete replied %T", script.ErrReply, v)
	}
	return int(n), nil
}

func (s *redisStore) decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	if s.shards != oneServer {
		if groups := s.shardGroups(checks); len(groups) > 1 {
			return s.decideAcrossShards(ctx, now, checks, results, groups)
		}
	}
	var line []any
	if len(checks) == 1 {
		line = new(oneLine)[:0]
	}
	reply, err := s.run(ctx, script.Now(now), checks, results, line)
	if err != nil {
		return store.Verdict{}, err
	}
	return store.Verdict{Allowed: reply.Allowed, At: time.UnixMicro(reply.Now)}, nil
}

// oneLine is a one-check decision's command line: the slots, a state key
// and a block key, the arguments.
type oneLine [3 + 2 + script.ArgsHead + script.ArgsPerRule]any

// run decides checks in one script run, filling results; the command line
// is built in line when it is not nil (see oneCheck).
func (s *redisStore) run(ctx context.Context, now string, checks []store.Check, results []store.Result, line []any) (script.Reply, error) {
	blocks := 0
	for i := range checks {
		if checks[i].Blocks != (store.Key{}) {
			blocks++
		}
	}
	keys, args := len(checks)+blocks, script.ArgsHead+script.ArgsPerRule*len(checks)
	if cap(line) < 3+keys+args {
		line = make([]any, 0, 3+keys+args)
	}
	call := script.NewCallOn(line)
	for i := range checks {
		call.Key(checks[i].Key.String())
	}
	for i := range checks {
		if c := &checks[i]; c.Blocks != (store.Key{}) {
			call.Key(c.Blocks.String())
		}
	}
	call.Arg(now, s.minTTL)
	var mask script.Mask
	for i := range checks {
		c := &checks[i]
		p, err := s.paramsOf(c)
		if err != nil {
			return script.Reply{}, err
		}
		penalty := any(script.NoBlocks)
		if c.Blocks != (store.Key{}) {
			penalty = script.Penalty(c.Penalty)
		}
		cost := script.Cost(c.Cost)
		switch {
		case c.Shadow:
			cost = script.ShadowCost(c.Cost)
		case c.LeaseUnits > 0:
			cost = script.LeaseCost(c.Cost, c.LeaseUnits)
		}
		call.Arg(p.Arg, cost, penalty, script.Slot(c.Slot))
		mask |= p.Mask
	}
	v, err := s.caller.Run(ctx, script.Stack(mask), call)
	if err != nil {
		s.reloadTopology(err)
		return script.Reply{}, err
	}
	return script.Parse(v, len(checks), func(i int, r script.Rule) {
		results[i] = store.Result{Result: r.Result, Blocked: r.Blocked, Token: r.Token, Leased: r.Lease}
	})
}
