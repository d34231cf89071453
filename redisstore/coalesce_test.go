package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// pipelines counts the round trips of a client that carry more than one
// decision (pipelines of script calls, calls of the batch function), and
// the most decisions one carried.
type pipelines struct{ n, largest atomic.Int64 }

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		p.count([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.count(cmds)
		return next(ctx, cmds)
	}
}

func (p *pipelines) count(cmds []redis.Cmder) {
	decisions := int64(0)
	for _, c := range cmds {
		decisions += int64(decisionsIn(c))
	}
	if decisions < 2 {
		return
	}
	p.n.Add(1)
	for l := p.largest.Load(); decisions > l && !p.largest.CompareAndSwap(l, decisions); l = p.largest.Load() {
	}
}

// decisionsIn is how many decisions a command carries: a call of a batch
// function its count of stacks, another script call one, anything else
// none.
func decisionsIn(c redis.Cmder) int {
	a := c.Args()
	switch c.Name() {
	case "fcall":
		fn, _ := a[1].(string)
		switch {
		case strings.HasPrefix(fn, "rl_batch_"):
			return a[3+a[2].(int)+2].(int)
		case strings.HasPrefix(fn, "rl_slots_"): // one declared key, then the keys' count and the keys
			return a[5+a[4].(int)+2].(int)
		}
		return 1
	case "evalsha", "eval":
		return 1
	}
	return 0
}

// Concurrent decisions on a *redis.Client share round trips (pipelines of
// several script calls, or one call of the batch function) and stay exact:
// 64 goroutines on one key of a limit of 100 admit exactly 100.
// WithCoalescing(false) sends each decision on its own.
func TestCoalescing(t *testing.T) {
	s := redistest.Start(t)
	for _, on := range []bool{true, false} {
		var p pipelines
		rdb := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr, PoolSize: 80, ContextTimeoutEnabled: true}) // used as it is: its hook sees the pipelines
		rdb.AddHook(&p)
		t.Cleanup(func() { rdb.Close() })
		lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}},
			redisstore.WithCoalescing(on), redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0),
			limiter.WithPrefix(map[bool]string{true: "co", false: "alone"}[on]))
		if err != nil {
			t.Fatal(err)
		}
		if got := ruletest.Hammer(t, 64, 5, func() (limiter.Decision, error) { return lim.Allow(ctx, "r", "hot") }); got != 100 {
			t.Errorf("coalescing %v: admitted %d, want 100", on, got)
		}
		t.Logf("coalescing %v: %d round trips of several decisions, the largest of %d", on, p.n.Load(), p.largest.Load())
		if on && p.largest.Load() < 2 {
			t.Errorf("coalescing: no round trip carried more than one decision")
		}
		if !on && p.n.Load() != 0 {
			t.Errorf("WithCoalescing(false): %d round trips of several decisions", p.n.Load())
		}
	}
}

// While Redis is paused, coalesced decisions, queued or in flight, return
// at their deadline with a timeout, and none is left waiting; once Redis
// answers again, decisions go through.
func TestCoalescedTimeouts(t *testing.T) {
	s := redistest.Start(t)
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1000, Period: time.Second, Burst: 1000}}},
		redisstore.WithTimeout(100*time.Millisecond), limiter.WithRetryInterval(time.Millisecond), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Allow(ctx, "r", "warm"); err != nil { // the library is loaded
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr})
	defer admin.Close()
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "400", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	var timedOut, other atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			_, err := lim.Allow(ctx, "r", "k")
			switch {
			case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limiter.ErrUnavailable):
				timedOut.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	wg.Wait()
	if timedOut.Load() != 32 {
		t.Errorf("%d of 32 timed out (or were turned away once Redis was marked down), %d otherwise", timedOut.Load(), other.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := lim.Allow(ctx, "r", "after")
		if err == nil && d.Allowed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no decision after the pause: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Coalesced stacks stay all-or-nothing: 64 goroutines deciding one client's
// stack of a per-client limit of 100 and a gate of 60 (each stack a
// different mix of algorithms, some rules taking blocks) admit exactly 60,
// and the per-client rule was charged for those 60 only.
func TestCoalescedStacks(t *testing.T) {
	s := redistest.Start(t)
	var p pipelines
	rdb := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr, PoolSize: 80, ContextTimeoutEnabled: true})
	rdb.AddHook(&p)
	t.Cleanup(func() { rdb.Close() })
	for _, client := range []limiter.Rule{
		{Name: "client", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 100}},
		{Name: "client", Algorithm: algorithms.SlidingWindow{Limit: 100, Window: time.Hour}, Blockable: true},
		{Name: "client", Algorithm: algorithms.TokenBucket{Capacity: 100, Rate: 1, Period: time.Hour}, Blockable: true, Penalty: time.Minute},
	} {
		rules := []limiter.Rule{client, {Name: "gate", Algorithm: algorithms.FixedWindow{Limit: 60, Window: time.Hour}, Blockable: true}}
		lim, err := ruletest.Build(rdb, rules, redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0),
			limiter.WithPrefix("stacks-"+client.Algorithm.String()))
		if err != nil {
			t.Fatal(err)
		}
		got := ruletest.Hammer(t, 64, 3, func() (limiter.Decision, error) {
			return lim.Decide(ctx, limiter.Check{Rule: "client", Identity: "c", Cost: 1}, limiter.Check{Rule: "gate", Identity: "all", Cost: 1})
		})
		if got != 60 {
			t.Errorf("%v: admitted %d of 192, want exactly 60", client.Algorithm, got)
		}
		d, err := lim.Status(ctx, "client", "c")
		if err != nil || d.Results[0].Remaining != 40 {
			t.Errorf("%v: the client rule has %d left (%v), want 40", client.Algorithm, d.Results[0].Remaining, err)
		}
	}
	t.Logf("%d round trips of several decisions, the largest of %d", p.n.Load(), p.largest.Load())
	if p.largest.Load() < 2 {
		t.Error("no round trip carried more than one decision")
	}
}
