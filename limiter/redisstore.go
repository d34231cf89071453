package limiter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

// RedisStore is a Store on Redis: each Decide is one run of the decision
// script, so all its checks are decided atomically in one round trip. On
// Redis 7 and later the scripts run as functions of one library (FCALL),
// loaded on first use and again after "Function not found" (a restart,
// FUNCTION FLUSH), on every master of a cluster: its helpers are created
// once, not on every run. Where functions are not available (Redis 6,
// miniredis, an ACL refusing FCALL or FUNCTION) the store runs them as
// scripts (EVALSHA, or EVAL after NOSCRIPT) from the first such answer on,
// and tries functions again a minute later; an ACL refusing the keys is an
// error, not a reason to switch. See WithRedisFunctions. The library's
// name carries a hash of its code, so two versions of an application never
// replace each other's during a rolling deploy (each leaves its library
// behind: FUNCTION DELETE removes one).
//
// On a *redis.Client, decisions are coalesced: one made while fewer than
// two are in flight goes straight to Redis; those that arrive meanwhile
// leave together when one returns, as one call of the library's batch
// function, which decides each of them as its own call would (one atomic
// run per stack, in order), so under load a round trip and a function call
// carry many decisions (fewer system calls and reads on the client, less
// work per decision on Redis), with no added wait at low load. Each keeps
// its own deadline. WithCoalescing(false) turns it off.
// Given go-redis's AutoPipeliner (either face) on one server, the store
// coalesces the same way: a lone decision is submitted to the deferred
// face of its client (AsyncAutoPipeline) and waits for its reply only
// until its deadline (once submitted it stays in the AutoPipeliner's batch
// and may still run); a batch goes out as a plain pipeline on the same
// client (AutoPipeliner.Pipeline), which the AutoPipeliner's engine would
// only queue again. Other clients are used as they are.
//
// Each call is bounded by the store's timeout (WithTimeout), even though
// go-redis ignores context deadlines for socket I/O unless
// ContextTimeoutEnabled is set: a *redis.Client is used through
// rdb.WithTimeout(timeout), a clone sharing its pool, so every read and
// write stops at the timeout (hooks added to the client later are not seen
// by the clone); calls through an AutoPipeliner stop waiting at it (a
// batch's pipeline may wait for the client's ReadTimeout, but its calls
// return at their deadline); other clients without ContextTimeoutEnabled
// get a guard goroutine per call.
//
// On a *redis.Client for one server, the store adds a dial hook to the
// client (its pool dials with the client's own hooks): go-redis redials a
// refused address in the background until the call's deadline, and the
// call would see only the timeout. When a dial fails (connection refused,
// host unreachable), the store's calls in flight fail at once with the
// dial's error, and a call that timed out while the latest dial had failed
// carries that dial's error as its cause (still context.DeadlineExceeded
// to errors.Is).
//
// On Redis Cluster (a *redis.ClusterClient, or any client with WithCluster)
// checks are grouped by hash slot, and on a *redis.Ring by hash tag (a Ring
// runs a script on its first key's shard). Each group is one atomic script
// run. When a stack spans several slots, the first group reads the clock
// and the others decide at the same instant, concurrently; if any group
// denies, the groups that consumed give it back (refund.lua). This never
// admits more than the limits allow, but a request that races a refund may
// be denied where an atomic decision would have admitted it, and a refund
// lost to a network failure leaves its consumption in place (stricter,
// never looser). After a network error the store asks the cluster client
// to reload the topology, so a failed-over master is left quickly.
type RedisStore struct {
	rdb             redis.Scripter
	scope           redis.Scripter // the client passed in, whose server holds the state
	timeout         time.Duration
	minTTL          string
	shards          sharding
	honoursDeadline bool
	caller          *script.Caller // functions or scripts
	params          sync.Map       // algorithms.Algorithm -> script.Params, encoded once
	dials           *dialWatch     // nil unless the client is one server's *redis.Client
}

// sharding says how a client spreads keys over servers.
type sharding int

const (
	oneServer sharding = iota
	bySlot             // Redis Cluster: CRC16 hash slots
	byTag              // go-redis Ring: consistent hashing of hash tags
)

// NewRedisStore returns a Store on rdb, any redis.Scripter. It takes the
// store options (WithTimeout, WithCluster, WithMinTTL) and does not touch
// Redis.
func NewRedisStore(rdb redis.Scripter, opts ...Option) (*RedisStore, error) {
	if rdb == nil || isNilPointer(rdb) {
		return nil, fmt.Errorf("%w: nil Redis client", ratelimit.ErrConfig)
	}
	cfg := defaults()
	if err := cfg.apply(opts, true); err != nil {
		return nil, err
	}
	s := &RedisStore{rdb: rdb, scope: rdb, timeout: cfg.timeout, minTTL: script.MinTTL(cfg.minTTL), honoursDeadline: honoursDeadline(rdb)}
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
			s.dials = watchDials(c) // on c itself: its pool dials through c's hooks, not the clone's
		}
		if !s.honoursDeadline {
			c = c.WithTimeout(cfg.timeout)
		}
		s.rdb, s.honoursDeadline = c, true
		if !cfg.alone {
			s.rdb = newCoalescer(client{c}, cfg.timeout, s.dials)
		}
	case *redis.AutoPipeliner:
		if d := deferredFace(c); d != nil {
			s.rdb, s.honoursDeadline = d, true
			if !cfg.alone && s.shards == oneServer {
				s.rdb = newCoalescer(d, cfg.timeout, nil) // no dial hook: a hooked client's AutoPipeliner runs its hooks per batch
			}
		}
	}
	s.caller = script.NewCaller(s.rdb, cfg.functions)
	return s, nil
}

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

func (s *RedisStore) paramsOf(alg algorithms.Algorithm) (script.Params, error) {
	if p, ok := s.params.Load(alg); ok {
		return p.(script.Params), nil
	}
	p, err := script.Encode(alg)
	if err == nil {
		s.params.Store(alg, p)
	}
	return p, err
}

type outcome[T any] struct {
	v   T
	err error
}

// within runs f within the store's timeout. It returns by then even when
// the client would wait longer (see honoursDeadline): the call then fails
// with the context's error while f finishes in the background, bounded by
// the client's own timeouts.
func within[T any](s *RedisStore, ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	if s.honoursDeadline {
		b := s.dials.bind(ctx, time.Now().Add(s.timeout))
		defer b.release()
		v, err := f(b.ctx)
		return v, s.dials.cause(b.ended(err))
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

// Decide implements Store within the store's timeout.
func (s *RedisStore) Decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error) {
	if _, ok := s.rdb.(*coalescer); ok { // the hot path: the coalescer enforces the deadline, no timer
		d, err := s.decide(context.WithValue(ctx, deadlineKey{}, time.Now().Add(s.timeout)), now, checks)
		return d, s.dials.cause(err)
	}
	if s.honoursDeadline { // without within's closure
		b := s.dials.bind(ctx, time.Now().Add(s.timeout))
		defer b.release()
		d, err := s.decide(b.ctx, now, checks)
		return d, s.dials.cause(b.ended(err))
	}
	return within(s, ctx, func(ctx context.Context) (Decision, error) { return s.decide(ctx, now, checks) })
}

// Refund implements Store within the store's timeout: one refund.lua run
// per shard, concurrently.
func (s *RedisStore) Refund(ctx context.Context, now, at time.Time, refunds []StoreRefund) error {
	_, err := within(s, ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.refund(ctx, script.Now(now), strconv.FormatInt(at.UnixMicro(), 10), refunds)
	})
	return err
}

// Block implements Store within the store's timeout (block.lua).
func (s *RedisStore) Block(ctx context.Context, now time.Time, key string, d time.Duration) error {
	_, err := within(s, ctx, func(ctx context.Context) (any, error) {
		return s.caller.Run(ctx, script.Block(), []string{key}, script.Now(now), s.minTTL, d.Microseconds())
	})
	return err
}

// Delete implements Store within the store's timeout (delete.lua).
func (s *RedisStore) Delete(ctx context.Context, keys ...string) (int, error) {
	v, err := within(s, ctx, func(ctx context.Context) (any, error) {
		return s.caller.Run(ctx, script.Delete(), keys)
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

func (s *RedisStore) decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error) {
	if s.shards != oneServer {
		if groups := s.shardGroups(checks); len(groups) > 1 {
			return s.decideAcrossShards(ctx, now, checks, groups)
		}
	}
	d := Decision{Results: make([]RuleResult, len(checks))}
	reply, err := s.run(ctx, script.Now(now), checks, d.Results)
	if err != nil {
		return Decision{}, err
	}
	d.Allowed, d.At = reply.Allowed, time.UnixMicro(reply.Now)
	return d, nil
}

// run decides checks in one script run, filling results.
func (s *RedisStore) run(ctx context.Context, now string, checks []StoreCheck, results []RuleResult) (script.Reply, error) {
	keys := make([]string, len(checks), len(checks)+1)
	args := make([]any, script.ArgsHead, script.ArgsHead+script.ArgsPerRule*len(checks))
	args[0], args[1] = now, s.minTTL
	var mask script.Mask
	for i, c := range checks {
		p, err := s.paramsOf(c.Algorithm)
		if err != nil {
			return script.Reply{}, err
		}
		keys[i] = c.Key
		penalty := any(script.NoBlocks)
		if c.Blocks != "" {
			penalty = script.Penalty(c.Penalty)
		}
		args = append(args, p.Arg, script.Cost(c.Cost), penalty)
		mask |= p.Mask
	}
	for _, c := range checks {
		if c.Blocks != "" {
			keys = append(keys, c.Blocks)
		}
	}
	v, err := s.caller.Run(ctx, script.Decision(mask), keys, args...)
	if err != nil {
		s.reloadTopology(err)
		return script.Reply{}, err
	}
	return script.Parse(v, len(checks), func(i int, r script.Rule) {
		results[i].Result, results[i].Blocked, results[i].Token = r.Result, r.Blocked, Token(r.Token)
	})
}

// dialWatch is a dial hook on the client a store was given, for the
// failures that its pool's dials meet. go-redis dials in the background,
// with that client's dialer and hooks (not those of the store's
// timeout-wrapped clone), redialling a refused address until the call's
// deadline: the call sees only "context deadline exceeded". The watch keeps
// the latest dial's failure, the cause of such a timeout (see cause),
// and when a dial fails it ends at once the store's calls in flight (see
// bind): they would wait for a connection until their deadline, and
// nothing listens.
type dialWatch struct {
	failed atomic.Pointer[dialError] // the latest dial's failure; nil once a dial succeeded since
	epoch  atomic.Pointer[epoch]     // ended by the next failed dial
}

// epoch is what calls in flight wait on: its context ends, with the
// dialError as its cause, at the next failed dial.
type epoch struct {
	ctx context.Context
	end context.CancelCauseFunc
}

// dialError is the failure of a dial of the store's client: the cause of
// the failures it leads to.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// watchDials adds a dialWatch to c's hooks. It sees every dial of c's pool,
// which the store's calls share with the application's.
func watchDials(c *redis.Client) *dialWatch {
	w := &dialWatch{}
	w.newEpoch()
	c.AddHook(w)
	return w
}

// newEpoch starts a new epoch and returns the one it replaces.
func (w *dialWatch) newEpoch() *epoch {
	ctx, end := context.WithCancelCause(context.Background())
	return w.epoch.Swap(&epoch{ctx, end})
}

// DialHook records each dial's outcome. A dial that gave up because its own
// context ended (a caller's deadline, the pool's dial timeout) is no news
// of the server.
func (w *dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		switch {
		case err == nil:
			if w.failed.Load() != nil {
				w.failed.Store(nil)
			}
		case ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
			de := &dialError{err}
			w.failed.Store(de)
			w.newEpoch().end(de)
		}
		return conn, err
	}
}

// ProcessHook leaves commands as they are.
func (w *dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook leaves pipelines as they are.
func (w *dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// bound is a call's context from bind.
type bound struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool // nil without a watch
	epoch  *epoch
}

// bind returns ctx with deadline, ended as well by the next failed dial.
// w may be nil (a client not watched): then only the deadline applies.
func (w *dialWatch) bind(ctx context.Context, deadline time.Time) bound {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	if w == nil {
		return bound{ctx: ctx, cancel: cancel}
	}
	e := w.epoch.Load()
	return bound{ctx: ctx, cancel: cancel, stop: context.AfterFunc(e.ctx, cancel), epoch: e}
}

// release frees the context.
func (b bound) release() {
	if b.stop != nil {
		b.stop()
	}
	b.cancel()
}

// ended returns err, the error of the call made with b, or the failed dial
// that ended the call.
func (b bound) ended(err error) error {
	if b.epoch != nil && errors.Is(err, context.Canceled) && b.epoch.ctx.Err() != nil {
		return context.Cause(b.epoch.ctx)
	}
	return err
}

// cause returns err, a store call's failure, with the latest dial's
// failure as its cause when err is a timeout and no dial has succeeded
// since: the call waited for a connection that could not be made. The
// result is still context.DeadlineExceeded to errors.Is.
func (w *dialWatch) cause(err error) error {
	if w == nil || err == nil || !isTimeout(err) || dialFailed(err) {
		return err
	}
	if de := w.failed.Load(); de != nil {
		return withDialCause(de, err)
	}
	return err
}

// withDialCause is err, a timeout, with the failed dial as its cause, and
// reads so: "dial tcp 127.0.0.1:6379: connect: connection refused (context
// deadline exceeded)".
func withDialCause(de *dialError, err error) error {
	return fmt.Errorf("%w (%w)", de, err)
}
