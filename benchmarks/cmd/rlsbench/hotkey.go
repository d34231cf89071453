package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// hot is the hot-key check's outcome on one server.
type hot struct {
	limit, callers int
	load           // its calls; admitted must be limit
}

// hotKey has callers share twice limit calls on one descriptor limited
// to limit an hour, on a value no earlier call used, and counts what was
// admitted: exactly limit, for a server that counts right.
func hotKey(ctx context.Context, c *client, callers, limit int, value string) (hot, error) {
	if err := freshHour(ctx); err != nil {
		return hot{}, err
	}
	var t tally
	var next atomic.Int64
	total := int64(2 * limit)
	req := hotRequest(value)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range callers {
		stub := c.stub(i)
		wg.Go(func() {
			for next.Add(1) <= total && ctx.Err() == nil {
				call, cancel := context.WithTimeout(ctx, callTimeout)
				t0 := time.Now()
				res, err := stub.ShouldRateLimit(call, req)
				t.add(time.Since(t0), res, err)
				cancel()
			}
		})
	}
	wg.Wait()
	return hot{limit: limit, callers: callers, load: t.load(time.Since(start))}, ctx.Err()
}

// hourMargin is how close to the next hour the hot-key check will not
// start: its window must not turn over while it runs.
const hourMargin = 30 * time.Second

// freshHour waits, when the hour ends within hourMargin, for the next.
func freshHour(ctx context.Context) error {
	now := time.Now()
	next := now.Truncate(time.Hour).Add(time.Hour)
	if next.Sub(now) > hourMargin {
		return nil
	}
	fmt.Printf("rlsbench: waiting %v for the next hour's window\n", next.Sub(now).Round(time.Second))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(next) + time.Second):
		return nil
	}
}
