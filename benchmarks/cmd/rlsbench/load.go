package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callTimeout bounds each call of the load phases, so that a server that
// stops answering cannot hold a phase past its length by much.
const callTimeout = time.Second

// closedLoop runs callers, each calling as soon as its last call is
// answered, for d, and returns what they got.
func closedLoop(ctx context.Context, c *client, tr *traffic, callers int, d time.Duration, seed uint64) load {
	var t tally
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for i := range callers {
		p, stub := tr.picker(seed+uint64(i)), c.stub(i)
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				call, cancel := context.WithTimeout(ctx, callTimeout)
				t0 := time.Now()
				res, err := stub.ShouldRateLimit(call, p.request())
				t.add(time.Since(t0), res, err)
				cancel()
			}
		})
	}
	wg.Wait()
	return t.load(time.Since(start))
}

// maxInFlight bounds the open loop's calls in flight: a call due while
// that many are unanswered is not made, and counts as an error.
const maxInFlight = 4096

// openLoop makes rate calls a second for d, each at its due time whether
// or not the earlier ones were answered, spread over the connections;
// each call's latency counts from its due time, so that a server falling
// behind shows in it.
func openLoop(ctx context.Context, c *client, tr *traffic, rate int, d time.Duration, seed uint64) load {
	var t tally
	var inFlight atomic.Int64
	var wg sync.WaitGroup
	p := tr.picker(seed)
	interval := time.Second / time.Duration(max(rate, 1))
	start := time.Now()
	for i := 0; time.Duration(i)*interval < d && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		if inFlight.Load() >= maxInFlight {
			t.drop()
			continue
		}
		inFlight.Add(1)
		req, stub := p.request(), c.stub(i)
		wg.Go(func() {
			defer inFlight.Add(-1)
			call, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			res, err := stub.ShouldRateLimit(call, req)
			t.add(time.Since(due), res, err)
		})
	}
	wg.Wait()
	return t.load(time.Since(start))
}
