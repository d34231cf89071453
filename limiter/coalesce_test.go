package limiter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// pipelines counts the pipelines of script calls a client sends, and the
// largest.
type pipelines struct{ n, largest atomic.Int64 }

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if name := cmds[0].Name(); name != "fcall" && name != "evalsha" && name != "eval" {
			return next(ctx, cmds) // a connection's handshake
		}
		p.n.Add(1)
		for l := p.largest.Load(); int64(len(cmds)) > l && !p.largest.CompareAndSwap(l, int64(len(cmds))); l = p.largest.Load() {
		}
		return next(ctx, cmds)
	}
}

// Concurrent decisions on a *redis.Client share round trips (pipelines of
// several script calls) and stay exact: 64 goroutines on one key of a
// limit of 100 admit exactly 100. WithCoalescing(false) sends no
// pipeline.
func TestCoalescing(t *testing.T) {
	s := redistest.Start(t)
	for _, on := range []bool{true, false} {
		var p pipelines
		rdb := redis.NewClient(&redis.Options{Addr: s.Client.Options().Addr, PoolSize: 80, ContextTimeoutEnabled: true}) // used as it is: its hook sees the pipelines
		rdb.AddHook(&p)
		t.Cleanup(func() { rdb.Close() })
		lim, err := limiter.New(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}},
			limiter.WithCoalescing(on), limiter.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0),
			limiter.WithPrefix(map[bool]string{true: "co", false: "alone"}[on]))
		if err != nil {
			t.Fatal(err)
		}
		if got := hammer(t, 64, 5, func() (limiter.Decision, error) { return lim.Allow(ctx, "r", "hot") }); got != 100 {
			t.Errorf("coalescing %v: admitted %d, want 100", on, got)
		}
		t.Logf("coalescing %v: %d pipelines, the largest of %d decisions", on, p.n.Load(), p.largest.Load())
		if on && p.largest.Load() < 2 {
			t.Errorf("coalescing: no pipeline carried more than one decision")
		}
		if !on && p.n.Load() != 0 {
			t.Errorf("WithCoalescing(false): %d pipelines sent", p.n.Load())
		}
	}
}

// While Redis is paused, coalesced decisions, queued or in flight, return
// at their deadline with a timeout, and none is left waiting; once Redis
// answers again, decisions go through.
func TestCoalescedTimeouts(t *testing.T) {
	s := redistest.Start(t)
	lim, err := limiter.New(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1000, Period: time.Second, Burst: 1000}}},
		limiter.WithTimeout(100*time.Millisecond), limiter.WithRetryInterval(time.Millisecond), limiter.WithDenyCache(0, 0))
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
