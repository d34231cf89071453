package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// TestClusterFailover fails over the master of a hot key while 16
// goroutines keep deciding on it: a coordinated CLUSTER FAILOVER on its
// replica, and the master killed outright. Decisions must go on (errors
// only around the switch, within the timeout), and admissions may exceed
// the limit only by the state the old master lost, which is measured.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two 6-node clusters")
	}
	for _, mode := range []string{"CLUSTER FAILOVER", "master killed"} {
		t.Run(mode, func(t *testing.T) {
			const limit = 5000
			c := redistest.StartCluster(t, 3, 1)
			at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
			lim, err := ruletest.Build(c.Client, []limiter.Rule{{Name: "hot", Algorithm: algorithms.FixedWindow{Limit: limit, Window: time.Hour}}},
				redisstore.WithMinTTL(time.Hour), redisstore.WithTimeout(300*time.Millisecond), limiter.WithClock(func() time.Time { return at }))
			if err != nil {
				t.Fatal(err)
			}
			master, replica := c.MasterOf(t, "ratelimit:{hot:x}:fw")
			if replica == nil {
				t.Fatal("hot key's master has no replica")
			}

			var sent, admitted, failed, afterSwitch, failedAfter atomic.Int64
			var worst atomic.Int64
			var switched atomic.Bool
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						start := time.Now()
						d, err := lim.Allow(context.Background(), "hot", "x")
						if el := time.Since(start).Nanoseconds(); el > worst.Load() {
							worst.Store(el)
						}
						sent.Add(1)
						late := switched.Load()
						if late {
							afterSwitch.Add(1)
						}
						switch {
						case err != nil:
							failed.Add(1)
							if late {
								failedAfter.Add(1)
							}
						case d.Allowed:
							admitted.Add(1)
						}
					}
				})
			}
			time.Sleep(time.Second)
			began := time.Now()
			failover := func() {
				if mode == "CLUSTER FAILOVER" {
					// A coordinated failover gives up when the master is too
					// busy to hand over in time; it is asked again below.
					if err := replica.Client.Do(context.Background(), "CLUSTER", "FAILOVER").Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			failover()
			if mode != "CLUSTER FAILOVER" {
				master.Stop()
			}
			asked := time.Now()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				role, err := replica.Client.Do(context.Background(), "ROLE").Slice()
				if err == nil && len(role) > 0 && role[0] == "master" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("replica was not promoted")
				}
				if time.Since(asked) > 5*time.Second {
					failover()
					asked = time.Now()
				}
			}
			switchTook := time.Since(began)
			// Then the client has to notice the new topology.
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if _, err := lim.Decide(context.Background(), limiter.Check{Rule: "hot", Identity: "x", Cost: 0}); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("decisions did not resume after the failover")
				}
			}
			recovered := time.Since(began)
			time.Sleep(500 * time.Millisecond) // requests in flight across the switch finish
			switched.Store(true)
			time.Sleep(time.Second)
			close(stop)
			wg.Wait()

			d, err := lim.Decide(context.Background(), limiter.Check{Rule: "hot", Identity: "x", Cost: 0})
			if err != nil {
				t.Fatalf("after failover: %v", err)
			}
			kept := int64(limit - d.Results[0].Remaining)
			lost := max(0, admitted.Load()-kept)
			t.Logf("%s: promoted in %v, decisions back in %v; sent %d, admitted %d (limit %d), denied %d, errors %d; Redis kept %d admissions, lost %d; worst latency %v",
				mode, switchTook.Round(time.Millisecond), recovered.Round(time.Millisecond), sent.Load(), admitted.Load(), limit, sent.Load()-admitted.Load()-failed.Load(),
				failed.Load(), kept, lost, time.Duration(worst.Load()).Round(time.Millisecond))

			if kept > limit {
				t.Errorf("Redis counted %d admissions, above the limit %d", kept, limit)
			}
			if admitted.Load() > limit+lost {
				t.Errorf("admitted %d, more than the limit %d plus the %d lost", admitted.Load(), limit, lost)
			}
			if mode == "CLUSTER FAILOVER" && lost != 0 {
				t.Errorf("a coordinated failover lost %d admissions", lost)
			}
			if afterSwitch.Load() == 0 || failedAfter.Load() != 0 {
				t.Errorf("after the switch settled: %d decisions, %d errors; want decisions and no errors", afterSwitch.Load(), failedAfter.Load())
			}
		})
	}
}
