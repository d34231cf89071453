package grpclimit

import (
	"context"
	"time"
)

// clock is the time a Client reads and waits on: the real one, unless a
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

// sleepUntil waits until at, unless ctx ends first.
func (c clock) sleepUntil(ctx context.Context, at time.Time) error {
	d := at.Sub(c.Now())
	switch {
	case d <= 0:
		return ctx.Err()
	case c.sleep != nil:
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
