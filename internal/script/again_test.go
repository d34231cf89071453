package script

import (
	"context"
	"testing"
	"time"
)

// A call refused for now is sent again only within a deadline, and only
// when the pause leaves as much room again for the send before it.
func TestWaitNeedsRoom(t *testing.T) {
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	soon, cancelSoon := context.WithDeadline(ctx, time.Now().Add(time.Millisecond))
	defer cancelSoon()
	far := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		deadline time.Time
		want     bool
	}{
		{"no deadline at all", ctx, time.Time{}, false},
		{"the first send's deadline, far", ctx, far, true},
		{"the context's deadline sooner than the pause", soon, far, false},
		{"the first send's deadline sooner than the pause", ctx, time.Now().Add(time.Millisecond), false},
		{"no room for the send after the pause", ctx, time.Now().Add(firstPause + firstPause/2), false},
		{"the context ended", canceled, far, false},
	} {
		if got := wait(tc.ctx, tc.deadline, firstPause); got != tc.want {
			t.Errorf("%s: wait %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Which replies say that the server refused the call for now.
func TestRefusedForNow(t *testing.T) {
	for msg, want := range map[string]bool{
		"READONLY You can't write against a read only replica.":                                  true,
		"READONLY You can't write against a read only replica. script: abc, on @user_script:26.": true,
		"LOADING Redis is loading the dataset in memory":                                         true,
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.":       true,
		"CLUSTERDOWN Hash slot not served":                                                       true,
		"CLUSTERDOWN The cluster is down":                                                        true,
		"TRYAGAIN Multiple keys request during rehashing of slot":                                true,
		"NOREPLICAS Not enough good replicas to write.":                                          true,
		"NOREPLICAS Not enough good replicas to write. script: abc, on @user_script:26.":         true,
		"NOSCRIPT No matching script. Please use EVAL.":                                          false,
		"MOVED 3999 127.0.0.1:7001":                                                              false,
		"ERR ratelimit: LOADING":                                                                 false,
	} {
		if got := refusedForNow(proto(msg)); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
	if refusedForNow(context.DeadlineExceeded) || refusedForNow(nil) {
		t.Error("a failure that is not a reply taken for a refusal")
	}
}
