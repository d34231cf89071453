package client

import (
	"context"
	"fmt"
	"time"
)

// sleepUntil waits until at, unless ctx ends first, or at is past the
// deadline (then it does not wait at all).
func sleepUntil(ctx context.Context, at, deadline time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	if at.After(deadline) {
		return fmt.Errorf("client: rate limited for %v, past the deadline or MaxWait: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
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
