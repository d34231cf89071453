package redisstore_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A decision that the server refuses for now did not run: a replica
// answers READONLY (a Sentinel failover under way, a demoted master the
// client reached before it saw the new one), or MASTERDOWN when it serves
// no stale data, a server loading its dataset answers LOADING, a master
// short of replicas in sync NOREPLICAS, a Cluster's node that serves no
// slot CLUSTERDOWN. It is sent again within its deadline (the store's
// timeout, a long one here), and decided once the server takes it: once,
// as the rule's count says. The server recovers once it has refused the
// decision at least once (its error statistics say so).
func TestSentAgainWhileRefusedForNow(t *testing.T) {
	for _, tc := range []struct {
		reply   string
		refuse  func(t *testing.T, s *redistest.Server) // from now on
		recover func(t *testing.T, s *redistest.Server)
	}{
		{"READONLY", demoted, func(t *testing.T, s *redistest.Server) {
			if err := s.Client.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
				t.Error(err)
			}
		}},
		{"LOADING", loadingForLong, func(t *testing.T, s *redistest.Server) {
			if err := s.Client.ConfigSet(ctx, "key-load-delay", "0").Err(); err != nil {
				t.Error(err)
			}
		}},
		{"MASTERDOWN", func(t *testing.T, s *redistest.Server) {
			if err := s.Client.ConfigSet(ctx, "replica-serve-stale-data", "no").Err(); err != nil {
				t.Fatal(err)
			}
			demoted(t, s)
		}, func(t *testing.T, s *redistest.Server) {
			if err := s.Client.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
				t.Error(err)
			}
		}},
		{"NOREPLICAS", func(t *testing.T, s *redistest.Server) {
			if err := s.Client.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, s *redistest.Server) {
			if err := s.Client.ConfigSet(ctx, "min-replicas-to-write", "0").Err(); err != nil {
				t.Error(err)
			}
		}},
		{"CLUSTERDOWN", func(t *testing.T, s *redistest.Server) {
			if err := s.Client.Do(ctx, "cluster", "delslotsrange", 0, 16383).Err(); err != nil {
				t.Fatal(err)
			}
		}, servesEverySlot},
	} {
		for _, functions := range []bool{true, false} {
			if tc.reply == "MASTERDOWN" && functions {
				continue // FCALL runs on a stale replica, and is refused at its first write: READONLY, above
			}
			t.Run(tc.reply+"/functions="+strconv.FormatBool(functions), func(t *testing.T) {
				args := []string{"--enable-debug-command", "yes", "--loading-process-events-interval-bytes", "1024", "--rdbcompression", "no"}
				if tc.reply == "CLUSTERDOWN" { // one node of a Cluster, serving every slot until refuse
					args = append(args, "--cluster-enabled", "yes")
				}
				s := redistest.Start(t, args...)
				if tc.reply == "CLUSTERDOWN" {
					servesEverySlot(t, s)
				}
				rdb := redis.NewClient(&redis.Options{Addr: s.Addr}) // go-redis's defaults: it retries none of the store's calls
				t.Cleanup(func() { _ = rdb.Close() })
				rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}}
				lim, err := ruletest.Build(rdb, rules, redisstore.WithTimeout(20*time.Second), redisstore.WithFunctions(functions))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := lim.Allow(ctx, "r", "u"); err != nil {
					t.Fatal(err)
				}
				tc.refuse(t, s)
				recovered := make(chan struct{})
				go func() {
					defer close(recovered)
					if waitFor(t, s.Client, "errorstats", "errorstat_"+tc.reply+":") {
						tc.recover(t, s)
					}
				}()
				d, err := lim.Allow(ctx, "r", "u")
				<-recovered
				if err != nil || !d.Allowed {
					t.Fatalf("refused with %s for a while: %v, %v; want it decided once the server took it", tc.reply, d, err)
				}
				for i, want := range []bool{true, false} { // the limit is 3: the decision refused for a while counted once
					if d, err := lim.Allow(ctx, "r", "u"); err != nil || d.Allowed != want {
						t.Errorf("decision %d: %v, %v; want allowed %v", i+3, d, err, want)
					}
				}
			})
		}
	}
}

// demoted makes s a replica of a master that does not answer (the store
// has decided on it as a master, so the library is there): it refuses
// writes with READONLY until it is made a master again.
func demoted(t *testing.T, s *redistest.Server) {
	if err := s.Client.Do(ctx, "replicaof", "127.0.0.1", "1").Err(); err != nil {
		t.Fatal(err)
	}
}

// servesEverySlot has s, one node of a Cluster, serve every hash slot,
// and waits until it does (cluster_state:ok).
func servesEverySlot(t *testing.T, s *redistest.Server) {
	if err := s.Client.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Error(err)
		return
	}
	for range 2000 {
		if info, err := s.Client.ClusterInfo(ctx).Result(); err == nil && strings.Contains(info, "cluster_state:ok") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("CLUSTER INFO never showed cluster_state:ok")
}

// loadingForLong makes s load its dataset again (DEBUG RELOAD), a key
// every 100 ms, answering LOADING meanwhile, until its key-load-delay is
// set to 0.
func loadingForLong(t *testing.T, s *redistest.Server) {
	if err := s.Client.Do(ctx, "debug", "populate", 200, "key", 2000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Client.ConfigSet(ctx, "key-load-delay", "100000").Err(); err != nil {
		t.Fatal(err)
	}
	reloader := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: -1, MaxRetries: -1})
	t.Cleanup(func() { _ = reloader.Close() })
	go func() { _ = reloader.Do(ctx, "debug", "reload").Err() }()
	if !waitFor(t, s.Client, "persistence", "loading:1") {
		t.FailNow()
	}
}

// waitFor reports whether the server's INFO section comes to hold line, within 20 s.
func waitFor(t *testing.T, c *redis.Client, section, line string) bool {
	for range 2000 {
		info, err := c.Info(ctx, section).Result()
		if err == nil && strings.Contains(info, line) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("INFO %s never showed %q", section, line)
	return false
}

// TestReleaseRefusedForNowIsUnsent: a slot's release that a replica keeps
// refusing past its deadline (READONLY) did not run: its error says so
// (fault.Unsent), so that the limiter's queue of failed releases sends it
// again, rather than leave the slot held until its TTL.
func TestReleaseRefusedForNowIsUnsent(t *testing.T) {
	s := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.WithTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	last := &lastRefund{Store: st}
	lim, err := limiter.New(last, []limiter.Rule{{Name: "c", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	d, err := lim.Allow(ctx, "c", "u")
	if err != nil || !d.Allowed {
		t.Fatalf("the slot: %v, %v", d, err)
	}
	demoted(t, s)
	defer func() {
		if err := s.Client.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := lim.Settle(ctx, d, 0); err == nil {
		t.Fatal("a release on a replica succeeded")
	}
	if !redis.HasErrorPrefix(last.err, "READONLY") || !fault.Unsent(last.err) {
		t.Errorf("the release's error %v: READONLY %v, unsent %v; want a READONLY taken for unsent", last.err, redis.HasErrorPrefix(last.err, "READONLY"), fault.Unsent(last.err))
	}
}
