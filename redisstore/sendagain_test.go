package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// sends records the deadline and the reply of every command a client
// sends (those keep accepts, when set), in order.
type sends struct {
	keep func(redis.Cmder) bool
	mu   sync.Mutex
	list []send
}

type send struct {
	verb     string
	deadline time.Time
	err      error
}

func (s send) String() string {
	return fmt.Sprintf("{%s %v %v}", s.verb, time.Until(s.deadline).Round(time.Second), s.err)
}

func (s *sends) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *sends) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		s.record(ctx, cmd, err)
		return err
	}
}
func (s *sends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			s.record(ctx, cmd, cmd.Err())
		}
		return err
	}
}

func (s *sends) record(ctx context.Context, cmd redis.Cmder, err error) {
	if s.keep != nil && !s.keep(cmd) {
		return
	}
	d, _ := ctx.Deadline()
	s.mu.Lock()
	s.list = append(s.list, send{strings.ToLower(fmt.Sprint(cmd.Args()[0])), d, err})
	s.mu.Unlock()
}

// A decision that finds the function library gone (FUNCTION FLUSH, a
// restart without persistence) or the script not cached (SCRIPT FLUSH)
// loads it and is sent again within its own deadline: the store's timeout
// from when it reached the store, not a new timeout for each send.
func TestSentAgainWithinTheCallsDeadline(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name  string
		opt   redisstore.Option
		flush func(*redis.Client) error
	}{
		{"functions", redisstore.WithFunctions(true), func(c *redis.Client) error { return c.FunctionFlush(ctx).Err() }},
		{"scripts", redisstore.WithFunctions(false), func(c *redis.Client) error { return c.ScriptFlush(ctx).Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true}) // the store sends through it, hooks and all
			defer rdb.Close()
			var s sends
			rdb.AddHook(&s)
			lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}},
				tc.opt, redisstore.WithTimeout(time.Hour), limiter.WithDenyCache(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lim.Allow(ctx, "r", "a"); err != nil {
				t.Fatal(err)
			}
			if err := tc.flush(srv.Client); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			s.list = nil
			s.mu.Unlock()
			if d, err := lim.Allow(ctx, "r", "a"); err != nil || !d.Allowed {
				t.Fatalf("after the flush: %+v %v", d, err)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.list) < 2 || s.list[0].err == nil || s.list[len(s.list)-1].err != nil {
				t.Fatalf("sends %v, want the first refused and the last run", s.list)
			}
			for _, again := range s.list[1:] {
				if first := s.list[0].deadline; again.deadline.After(first) {
					t.Errorf("sends %v: %s is sent with a deadline %v after the call's own", s.list, again.verb, again.deadline.Sub(first))
				}
			}
		})
	}
}
