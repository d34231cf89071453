package redisstore_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// refusing fails, as a refused dial, the commands that name a key of its
// hash tag prefix while on is set.
type refusing struct {
	tag string
	on  *atomic.Bool
}

func (r refusing) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r refusing) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && r.on.Load() && strings.Contains(s, r.tag) {
				err := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}
func (r refusing) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// lastRefund keeps the error of the latest Refund.
type lastRefund struct {
	store.Store
	err error
}

func (s *lastRefund) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	s.err = s.Store.Refund(ctx, now, at, r)
	return s.err
}

// Refunds that span shards go out in one round trip per shard: when some
// fail, the error says which refunds failed (a *fault.Refunds), so that
// the limiter sends again only what surely never ran.
func TestRefundErrorsPerShard(t *testing.T) {
	mini, _ := redistest.Mini(t)
	// Deadlines honoured: the store uses the client itself, hooks and all.
	rdb := redis.NewClient(&redis.Options{Addr: mini.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	var on atomic.Bool
	rdb.AddHook(refusing{tag: "{down:", on: &on})
	s, err := redisstore.New(rdb, redisstore.WithCluster(), redisstore.WithCoalescing(false))
	if err != nil {
		t.Fatal(err)
	}
	st := &lastRefund{Store: s}
	w := algorithms.FixedWindow{Limit: 1, Window: time.Hour}
	lim, err := limiter.New(st, []limiter.Rule{{Name: "up", Algorithm: w}, {Name: "down", Algorithm: w}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := lim.Decide(ctx, limiter.Check{Rule: "up", Identity: "u", Cost: 1}, limiter.Check{Rule: "down", Identity: "u", Cost: 1})
	if err != nil || !d.Allowed {
		t.Fatalf("%+v, %v", d, err)
	}
	on.Store(true)
	if _, err := lim.Settle(ctx, d, 0, 0); !errors.Is(err, limiter.ErrBackend) {
		t.Fatalf("Settle: %v", err)
	}
	var re *fault.Refunds
	if !errors.As(st.err, &re) || len(re.Errs) != 2 || re.Errs[0] != nil || !fault.RefundUnsent(st.err, 1) || fault.RefundUnsent(st.err, 0) {
		t.Fatalf("Refund's error: %#v, want the second refund's dial alone", st.err)
	}
	on.Store(false)
	if d, _ := lim.Allow(ctx, "up", "u"); !d.Allowed {
		t.Error("the refund that succeeded was not applied")
	}
	if d, _ := lim.Allow(ctx, "down", "u"); d.Allowed {
		t.Error("the refund that failed was applied")
	}
}
