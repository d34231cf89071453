package retry

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

var errLost = errors.New("lost")

// counted is an attempt that fails its first fails tries with errLost,
// counting its tries; again says whether a failure may be tried again.
func counted(fails int32, again bool, until time.Duration) (*Attempt, *atomic.Int32) {
	var tries atomic.Int32
	return &Attempt{
		Send: func(context.Context) error {
			if tries.Add(1) <= fails {
				return errLost
			}
			return nil
		},
		Again:   func(error) bool { return again },
		Timeout: time.Second,
		Until:   time.Now().Add(until),
	}, &tries
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

func TestQueue(t *testing.T) {
	var q Queue
	q.Log = "test retries failed"
	retried, retriedTries := counted(2, true, time.Minute)
	final, finalTries := counted(5, false, time.Minute)
	expired, expiredTries := counted(0, true, -time.Second)
	q.Add(errLost, retried, final, expired)
	waitFor(t, "the retried attempt's success", func() bool { return retriedTries.Load() == 3 })
	q.Close()
	if got := retriedTries.Load(); got != 3 {
		t.Errorf("an attempt that succeeded on its 3rd try was tried %d times", got)
	}
	if got := finalTries.Load(); got != 1 {
		t.Errorf("an attempt whose failure forbids another try was tried %d times, want 1", got)
	}
	if got := expiredTries.Load(); got != 0 {
		t.Errorf("an expired attempt was tried %d times, want 0", got)
	}
}

func TestCloseTriesPendingAndStops(t *testing.T) {
	var q Queue
	q.Log = "test retries failed"
	a, tries := counted(1<<30, true, time.Minute)
	q.Add(errLost, a)
	q.Close() // one last try at what is pending, then the goroutine ends
	after := tries.Load()
	if after < 1 {
		t.Fatalf("Close made no last try at a pending attempt")
	}
	q.Add(errLost, a) // after Close: dropped
	time.Sleep(4 * FirstWait)
	q.Close()
	if got := tries.Load(); got != after {
		t.Errorf("an attempt was tried %d times after Close, want none", got-after)
	}
}
