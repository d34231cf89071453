package limiter_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A caller whose deadline passes while Redis decides gave up: its failure
// says nothing of Redis, so the fallback store does not answer it. With
// Redis paused for longer than the caller's deadline (and the store's
// timeout longer than both), Decide fails with context.DeadlineExceeded,
// and no decision of the fallback store.
func TestCallerGaveUpNotAnsweredByFallback(t *testing.T) {
	s := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer admin.Close()
	for _, fallback := range []bool{false, true} {
		opts := []limiter.Option{limiter.WithDenyCache(0, 0), limiter.WithRetryInterval(time.Hour)}
		if fallback {
			opts = append(opts, limiter.WithFallback(memstore.Must()))
		}
		st := mustStore(redisstore.New(s.Client, redisstore.WithTimeout(10*time.Second)))
		lim := newLimiter(t, st, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}}, opts...)
		if _, err := lim.Allow(ctx, "r", "k"); err != nil {
			t.Fatal(err)
		}
		if err := admin.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		d, err := lim.Allow(short, "r", "k")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || d.Allowed || d.Fallback {
			t.Errorf("fallback %v: %+v, %v; want context.DeadlineExceeded and no decision", fallback, d, err)
		}
		if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			t.Fatal(err)
		}
		if d, err := lim.Allow(ctx, "r", "k"); err != nil || d.Fallback {
			t.Errorf("fallback %v: after the pause: %+v, %v", fallback, d, err)
		}
		lim.Close()
	}
}

// A decision that finds its pool's lease expired gives the lease's units
// back within the caller's deadline, not after it: with Redis's writes
// paused for longer than the caller's 50 ms (and the store's timeout
// longer still), Decide returns the caller's context error while the
// refund has not run (the units are still counted in Redis).
func TestLeaseRefundWithinCallerDeadline(t *testing.T) {
	srv := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	clk := newClock(bases[0])
	st := mustStore(redisstore.New(srv.Client, redisstore.WithTimeout(10*time.Second), redisstore.WithMinTTL(time.Hour)))
	lim := newLimiter(t, st, []limiter.Rule{{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}, Lease: time.Minute}}, clk.option())
	defer lim.Close()
	d, err := lim.Allow(ctx, "global", "all")
	if err != nil || !d.Allowed || d.Results[0].Leased != 4 {
		t.Fatalf("first request: %+v, %v; want allowed with a lease of 4", d, err)
	}
	count := func() string {
		keys, err := admin.Keys(ctx, "*{global:all}*").Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys %v, %v", keys, err)
		}
		v, err := admin.Get(ctx, keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		_, n, _ := strings.Cut(v, ":")
		return n
	}
	if n := count(); n != "5" {
		t.Fatalf("the store counts %s, want 5 (the request and its lease)", n)
	}
	clk.add(2 * time.Minute) // the lease has expired
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "1000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = lim.Allow(short, "global", "all")
	cancel()
	n := count() // reads go on while writes are paused
	if !errors.Is(err, context.DeadlineExceeded) || n != "5" {
		t.Errorf("Allow: %v, with the store counting %s; want context.DeadlineExceeded, returned while the refund waits (5)", err, n)
	}
	if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
}

// A caller whose deadline passes while Redis holds its call gets its
// context's end from every method that asks the store, never an
// ErrBackend: it says nothing of Redis (the store's timeout, 10 s here,
// has not run out). With Redis paused, Decide, Settle, Reset and Block
// each end with context.DeadlineExceeded, in which CauseOf finds no
// backend failure.
func TestCallerGaveUpIsNotABackendError(t *testing.T) {
	s := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer admin.Close()
	st := mustStore(redisstore.New(s.Client, redisstore.WithTimeout(10*time.Second)))
	lim := newLimiter(t, st, []limiter.Rule{
		{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}, Blockable: true},
		{Name: "slots", Algorithm: algorithms.Concurrency{Limit: 10, TTL: time.Minute}},
	}, limiter.WithDenyCache(0, 0), limiter.WithRetryInterval(time.Hour))
	defer lim.Close()
	held, err := lim.Decide(ctx, limiter.Check{Rule: "slots", Identity: "k", Cost: 1})
	if err != nil || !held.Allowed {
		t.Fatalf("the slot: %+v, %v", held, err)
	}
	for _, tc := range []struct {
		name string
		call func(context.Context) error
	}{
		{"Decide", func(c context.Context) error { _, err := lim.Allow(c, "r", "k"); return err }},
		{"Settle", func(c context.Context) error { _, err := lim.Settle(c, held, 0); return err }},
		{"Reset", func(c context.Context) error { return lim.Reset(c, "r", "k") }},
		{"Block", func(c context.Context) error { return lim.Block(c, "r", "k", time.Minute) }},
	} {
		if err := admin.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := tc.call(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limiter.ErrBackend) || limiter.CauseOf(err) != "" {
			t.Errorf("%s: %v (cause %q); want context.DeadlineExceeded, no ErrBackend", tc.name, err, limiter.CauseOf(err))
		}
		if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			t.Fatal(err)
		}
	}
}
