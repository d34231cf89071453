package redisstore_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// The store against Redis's failures and its script cache.

func TestScriptCacheFlushIsTransparent(t *testing.T) {
	s := redistest.Start(t)
	lim, err := ruletest.Build(s.Client, ruletest.Six(5))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.Client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := lim.Decide(ctx, ruletest.Checks(ruletest.Six(5), "a", 1)...); err != nil {
			t.Fatalf("after SCRIPT FLUSH: %v", err)
		}
	}
}

func TestBackendFailures(t *testing.T) {
	rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}}

	t.Run("stopped", func(t *testing.T) {
		s := redistest.Start(t)
		lim, err := ruletest.Build(s.Client, rules)
		if err != nil {
			t.Fatal(err)
		}
		s.Stop()
		if _, err := lim.Allow(ctx, "r", "a"); !errors.Is(err, limiter.ErrBackend) {
			t.Fatalf("got %v, want ErrBackend", err)
		}
	})

	t.Run("hung", func(t *testing.T) {
		// A server that accepts connections and never answers.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var conns sync.WaitGroup
		t.Cleanup(func() { ln.Close(); conns.Wait() })
		conns.Go(func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				conns.Go(func() { defer c.Close(); _, _ = c.Read(make([]byte, 1<<16)); time.Sleep(time.Second) })
			}
		})
		// AutoPipeliners wait for their batch whatever the context (their
		// client gives up on reads after 300 ms, so that closing them at the
		// end does not wait long).
		pc := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
		t.Cleanup(func() { pc.Close() })
		ap, err := pc.AutoPipeline()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ap.Close() })
		async, err := pc.AsyncAutoPipeline()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { async.Close() })
		// Whether or not the client honours context deadlines itself, and
		// on the client or on a store made first.
		for _, honours := range []bool{true, false} {
			c := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ContextTimeoutEnabled: honours})
			t.Cleanup(func() { c.Close() })
			for _, lim := range []*limiter.Limiter{
				ruletest.New(t, c, rules, redisstore.WithTimeout(50*time.Millisecond)),
				ruletest.New(t, mwtest.RedisStore(t, c, redisstore.WithTimeout(50*time.Millisecond)), rules),
				ruletest.New(t, ap, rules, redisstore.WithTimeout(50*time.Millisecond)),
				ruletest.New(t, async, rules, redisstore.WithTimeout(50*time.Millisecond)),
			} {
				start := time.Now()
				_, err := lim.Allow(ctx, "r", "a")
				if !errors.Is(err, limiter.ErrBackend) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("ContextTimeoutEnabled=%v: got %v, want ErrBackend wrapping context.DeadlineExceeded", honours, err)
				}
				// A hang detector, far above 50 ms and below go-redis's 3 s.
				if el := time.Since(start); el > 2*time.Second {
					t.Errorf("ContextTimeoutEnabled=%v: the call took %v", honours, el)
				}
			}
		}
	})
}
