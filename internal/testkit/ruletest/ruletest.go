// Package ruletest holds rule sets shared by the tests of several packages.
package ruletest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Six returns one rule of each algorithm, named by its code, each admitting
// size at once and refilling too slowly (an hour) to matter in a test.
func Six(size int) []limiter.Rule {
	return []limiter.Rule{
		{Name: "fw", Algorithm: algorithms.FixedWindow{Limit: size, Window: time.Hour}},
		{Name: "sl", Algorithm: algorithms.SlidingLog{Limit: size, Window: time.Hour}},
		{Name: "sw", Algorithm: algorithms.SlidingWindow{Limit: size, Window: time.Hour}},
		{Name: "tb", Algorithm: algorithms.TokenBucket{Capacity: size, Rate: 1, Period: time.Hour}},
		{Name: "lb", Algorithm: algorithms.LeakyBucket{Capacity: size, Rate: 1, Period: time.Hour}},
		{Name: "gc", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: size}},
	}
}

// Checks checks every rule of rules for identity, each at cost.
func Checks(rules []limiter.Rule, identity string, cost int) []limiter.Check {
	checks := make([]limiter.Check, len(rules))
	for i, r := range rules {
		checks[i] = limiter.Check{Rule: r.Name, Identity: identity, Cost: cost}
	}
	return checks
}

// New is a Limiter of rules on backend (a store.Store, or a
// redis.Scripter put in a Redis store), each option given to the piece it
// configures: a redisstore.Option to the store, a limiter.Option to the
// limiter. It fails t on an error.
func New(t testing.TB, backend any, rules []limiter.Rule, opts ...any) *limiter.Limiter {
	t.Helper()
	lim, err := Build(backend, rules, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// Build is New returning its error.
func Build(backend any, rules []limiter.Rule, opts ...any) (*limiter.Limiter, error) {
	var storeOpts []redisstore.Option
	var limOpts []limiter.Option
	for _, o := range opts {
		switch o := o.(type) {
		case redisstore.Option:
			storeOpts = append(storeOpts, o)
		case limiter.Option:
			limOpts = append(limOpts, o)
		default:
			return nil, fmt.Errorf("ruletest: %T is not an option", o)
		}
	}
	st, ok := backend.(store.Store)
	if !ok {
		rdb, _ := backend.(redis.Scripter) // nil: redisstore.New says so
		rs, err := redisstore.New(rdb, storeOpts...)
		if err != nil {
			return nil, err
		}
		st = rs
	} else if len(storeOpts) > 0 {
		return nil, fmt.Errorf("ruletest: Redis store options for a %T", backend)
	}
	return limiter.New(st, rules, limOpts...)
}

// Hammer runs goroutines*each decisions and returns how many were allowed.
func Hammer(t testing.TB, goroutines, each int, decide func() (limiter.Decision, error)) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				d, err := decide()
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return admitted.Load()
}

// KeySuffix is how the keys of alg's state end: its code, and the window
// or TTL of the windows, the log and a concurrency limit.
func KeySuffix(alg algorithms.Algorithm) string {
	d, err := algo.Describe(alg)
	if err != nil {
		panic(err)
	}
	return d.KeySuffix
}
