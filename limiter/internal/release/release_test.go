package release

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// remote is a Remote store whose calls last a second at most.
type remote struct{ store.Store }

func (remote) Remote() time.Duration { return time.Second }

// A lost decision's release makes two calls per try, each within the
// store's timeout: the try has the time of both. A server that answers
// each in 600 ms, within the store's second, has the release done at its
// first try (with one second for the try, its second call always timed
// out, and it was tried again until the slot's TTL).
func TestLostReleaseTryHasTheTimeOfItsCalls(t *testing.T) {
	var answered, timedOut atomic.Int32
	q := &Queue{Send: func(ctx context.Context, _ store.Store, _ time.Time, _ []store.Refund) error {
		select {
		case <-time.After(600 * time.Millisecond):
			answered.Add(1)
			return nil
		case <-ctx.Done():
			timedOut.Add(1)
			return ctx.Err()
		}
	}}
	defer q.Close()
	q.Lost(remote{}, []store.Check{{Cost: 1, Slot: 42}}, context.DeadlineExceeded, func(store.Refund) time.Duration { return time.Hour }, time.Second)
	for deadline := time.Now().Add(5 * time.Second); answered.Load() < 2 && timedOut.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if answered.Load() != 2 || timedOut.Load() != 0 {
		t.Errorf("%d calls answered, %d timed out; want the try's two answered", answered.Load(), timedOut.Load())
	}
}
