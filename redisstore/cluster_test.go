package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// clusterWithHook is a new client of c whose node clients carry p (with
// ContextTimeoutEnabled, so that the store uses them as they are: a
// WithTimeout clone runs no hooks).
func clusterWithHook(t *testing.T, c *redistest.Cluster, p redis.Hook) *redis.ClusterClient {
	t.Helper()
	addrs := c.Client.Options().Addrs // every node
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: 80, MaxRedirects: 8, ContextTimeoutEnabled: true, NewClient: func(opt *redis.Options) *redis.Client {
		n := redis.NewClient(opt)
		n.AddHook(p)
		return n
	}})
	t.Cleanup(func() { cc.Close() })
	return cc
}

// On a cluster client, concurrent decisions share each master's round
// trips (its pipelines, its batch calls, whose stacks span hash slots) and
// stay exact (see spreadExactly).
func TestClusterCoalescesPerNode(t *testing.T) {
	c := sharedCluster(t)
	var p pipelines
	spreadExactly(t, clusterWithHook(t, c, &p), &p, "master")
}

// spreadExactly decides on rdb from 64 goroutines over 300 identities, 5
// admitted per identity: exactly 1500 must be, and some round trip to a
// server (a master, a shard, as p counts them) must carry several
// decisions.
func spreadExactly(t *testing.T, rdb redis.Scripter, p *pipelines, server string) {
	t.Helper()
	lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Hour}}},
		redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	got := ruletest.Hammer(t, 64, 40, func() (limiter.Decision, error) {
		return lim.Allow(ctx, "r", fmt.Sprint("id-", n.Add(1)%300))
	})
	if got != 300*5 {
		t.Errorf("admitted %d, want %d", got, 300*5)
	}
	t.Logf("%d round trips to a %s of several decisions, the largest of %d", p.n.Load(), server, p.largest.Load())
	if p.largest.Load() < 2 {
		t.Errorf("no round trip to a %s carried more than one decision", server)
	}
}

// A slot that moves to another master while decisions run on its keys
// (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE): the calls
// the old master refuses (ASK, MOVED, a batch's stack that no longer finds
// its key) did not run and go again through the cluster client; nothing is
// decided twice or lost: the moved key admits exactly its limit and its
// count in Redis says so.
func TestClusterSlotMoves(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	var r refusals
	cc := clusterWithHook(t, c, &r)
	const limit = 600
	rule := limiter.Rule{Name: "r", Algorithm: algorithms.FixedWindow{Limit: limit, Window: time.Hour}}
	lim, err := ruletest.Build(cc, []limiter.Rule{rule}, redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	key := "ratelimit:{r:mover}:" + ruletest.KeySuffix(rule.Algorithm)
	source, _ := c.MasterOf(t, key)
	var target *redistest.Server
	for _, s := range c.Nodes {
		if s != source {
			target = s
			break
		}
	}

	var admitted, failed, tries atomic.Int64
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 2000 { // bounded; stop ends it sooner
				select {
				case <-stop:
					return
				default:
				}
				id := "mover"
				if i := n.Add(1); i%2 == 0 {
					id = fmt.Sprint("other-", i%200) // other slots, for mixed batches
				}
				d, err := lim.Allow(ctx, "r", id)
				if id == "mover" {
					tries.Add(1)
				}
				switch {
				case err != nil:
					failed.Add(1)
				case d.Allowed && id == "mover":
					admitted.Add(1)
				}
			}
		})
	}
	for tries.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	moveSlot(t, c, source, target, uint16(c.Client.ClusterKeySlot(ctx, key).Val()))
	// Go on until the key has been asked more than its limit, within 10 s.
	for deadline := time.Now().Add(10 * time.Second); tries.Load() < limit+100 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	t.Logf("refused: %d calls (ASK, MOVED), %d stacks of batches (their key gone)", r.calls.Load(), r.stacks.Load())
	if r.calls.Load()+r.stacks.Load() == 0 {
		t.Error("no call met the move: the test moved the slot too soon or too late")
	}
	if failed.Load() != 0 {
		t.Errorf("%d decisions failed while the slot moved", failed.Load())
	}
	if admitted.Load() != limit {
		t.Errorf("the moved key admitted %d, want %d", admitted.Load(), limit)
	}
	v, err := target.Client.Get(ctx, key).Result()
	if err != nil {
		t.Fatalf("the moved key on its new master: %v", err)
	}
	if want := fmt.Sprint(":", limit); len(v) < len(want) || v[len(v)-len(want):] != want {
		t.Errorf("the moved key holds %q, want a count of %d", v, limit)
	}
}

// refusals counts the calls a node refused because their slot moved, and
// the stacks of batch calls that failed because their key had gone.
type refusals struct{ calls, stacks atomic.Int64 }

func (r *refusals) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *refusals) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		r.count([]redis.Cmder{cmd})
		return err
	}
}
func (r *refusals) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		r.count(cmds)
		return err
	}
}

func (r *refusals) count(cmds []redis.Cmder) {
	for _, c := range cmds {
		if err := c.Err(); err != nil && (strings.HasPrefix(err.Error(), "ASK ") || strings.HasPrefix(err.Error(), "MOVED ")) {
			r.calls.Add(1)
		}
		if c, ok := c.(interface{ Val() any }); ok {
			replies, _ := c.Val().([]any)
			for _, v := range replies {
				if err, ok := v.(error); ok && strings.Contains(err.Error(), "non local key") {
					r.stacks.Add(1)
				}
			}
		}
	}
}

// moveSlot moves slot from source to target with its keys.
func moveSlot(t *testing.T, c *redistest.Cluster, source, target *redistest.Server, slot uint16) {
	t.Helper()
	id := func(s *redistest.Server) string {
		v, err := s.Client.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	do := func(s *redistest.Server, args ...any) {
		if err := s.Client.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v on %s: %v", args, s.Addr, err)
		}
	}
	sourceID, targetID := id(source), id(target)
	do(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID)
	do(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID)
	host, port, _ := splitAddr(target.Addr)
	for {
		keys, err := source.Client.ClusterGetKeysInSlot(ctx, int(slot), 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		do(source, args...)
		time.Sleep(20 * time.Millisecond) // decisions meanwhile meet ASK
	}
	for _, s := range c.Nodes {
		do(s, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
	}
}

func splitAddr(addr string) (host, port string, err error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("no port in %q", addr)
}
