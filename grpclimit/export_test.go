package grpclimit

import (
	"context"
	"time"
)

// SetClock makes c read the time from now and wait with sleep, which
// waits d or returns ctx's error, instead of the real clock's.
func SetClock(c *Client, now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	c.clock = clock{now: now, sleep: sleep}
}
