package client

import (
	"context"
	"time"
)

// clock is the time a Transport reads and waits on: the real one, unless a
// test set its own (export_test.go).
type clock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// Now is the current time.
func (c clock) Now() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// Sleep waits d, unless ctx ends first.
func (c clock) Sleep(ctx context.Context, d time.Duration) error {
	if c.sleep != nil {
		return c.sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sleepUntil waits until at, unless ctx ends first.
func (c clock) sleepUntil(ctx context.Context, at time.Time) error {
	d := at.Sub(c.Now())
	if d <= 0 {
		return ctx.Err()
	}
	return c.Sleep(ctx, d)
}
