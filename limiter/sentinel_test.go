package limiter_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestSentinel decides through a Sentinel failover client, exactly under
// contention, and goes on after Sentinel promotes the replica, with the
// state that was replicated.
func TestSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	lim, err := ruletest.Build(s.Client, ruletest.Six(100)[5:], fixedClock(bases[0]), exactnessTimeout) // GCRA, burst 100
	if err != nil {
		t.Fatal(err)
	}
	if got := ruletest.Hammer(t, 64, 5, func() (limiter.Decision, error) { return lim.Allow(ctx, "gc", "hot") }); got != 100 {
		t.Fatalf("admitted %d, want 100", got)
	}
	// WAIT makes the replica hold the state before the switch.
	if n, err := s.Master.Client.Wait(ctx, 1, time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	s.Failover(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := lim.Decide(context.Background(), limiter.Check{Rule: "gc", Identity: "hot", Cost: 1})
		if err == nil {
			if d.Allowed || d.Results[0].Remaining != 0 {
				t.Fatalf("after failover: %+v, want the replicated state (nothing left)", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no decision after the failover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d, err := lim.Decide(ctx, limiter.Check{Rule: "gc", Identity: "other", Cost: 1}); err != nil || !d.Allowed {
		t.Fatalf("writing on the new master: %+v %v", d, err)
	}
}
