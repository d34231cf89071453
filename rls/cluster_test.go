package rls_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

const clusterConfig = `
domain: edge
descriptors:
  - key: a
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: b
    rate_limit: {unit: hour, requests_per_unit: 5}
  - key: c
    rate_limit: {unit: hour, requests_per_unit: 5}
  - key: hot
    rate_limit: {unit: hour, requests_per_unit: 50}
  - key: wide
    rate_limit: {unit: hour, requests_per_unit: 1000}
`

// TestCluster serves on a 3-master Redis Cluster. The store splits a
// request's descriptors by hash slot, one script per slot, and gives
// back what the others consumed when one denies (redisstore's doc): so a
// refused request leaves every descriptor's count as it was, whichever
// master serves it, and a hot descriptor admits exactly its limit.
func TestCluster(t *testing.T) {
	addrs := testredis.StartCluster(t, 3)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = cc.Close() })
	ctx := context.Background()
	for deadline := time.Now().Add(20 * time.Second); ; {
		err := cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() })
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster client not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg, err := rls.Parse("cluster.yaml", []byte(clusterConfig))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{} // descriptor key -> rule name
	for _, r := range rls.Limits(cfg) {
		rules[r.Name[strings.LastIndex(r.Name, ".")+1:]] = r.Name
	}
	st, err := redisstore.New(cc, redisstore.WithTimeout(storeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(st, rls.Limits(cfg), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	srv, err := rls.NewServer(lim, []*rls.Config{cfg}, rls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, srv)

	// valueOn is a value of descriptor key whose state the master at addr
	// serves: keys are <prefix>:{<rule>:<identity>}:..., the identity the
	// hash of the quoted values (the test checks where the keys landed).
	valueOn := func(key, addr string) string {
		for i := range 1000 {
			v := key + strconv.Itoa(i)
			n, err := cc.MasterForKey(ctx, "{"+rules[key]+":"+keyfunc.Hash(strconv.Quote(v))+"}")
			if err != nil {
				t.Fatal(err)
			}
			if n.Options().Addr == addr {
				return v
			}
		}
		t.Fatalf("no value of %s on %s", key, addr)
		return ""
	}
	// holders maps each master's address to the rules whose keys it holds.
	holders := func() map[string][]string {
		var mu sync.Mutex
		out := map[string][]string{}
		err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			keys, err := n.Keys(ctx, "*").Result() // a test's few keys
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				for d, r := range rules {
					if strings.Contains(k, "{"+r+":") {
						out[n.Options().Addr] = append(out[n.Options().Addr], d)
					}
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	waitForFreshHour(t)

	t.Run("all-or-nothing across slots", func(t *testing.T) {
		a, b, c := desc("a", valueOn("a", addrs[0])), desc("b", valueOn("b", addrs[1])), desc("c", valueOn("c", addrs[2]))
		same(t, "first", summary(ask(t, client, a, b, c)), []any{ok, ok, uint32(1), ok, uint32(4), ok, uint32(4)})
		same(t, "second", summary(ask(t, client, a, b, c)), []any{ok, ok, uint32(0), ok, uint32(3), ok, uint32(3)})
		if got := holders(); len(got[addrs[0]]) != 1 || len(got[addrs[1]]) != 1 || len(got[addrs[2]]) != 1 {
			t.Fatalf("keys by master %v: want a, b and c each on its own master", got)
		}
		// a refuses: b and c, on the other masters, consume nothing.
		same(t, "a over", summary(ask(t, client, a, b, c)), []any{over, over, uint32(0), ok, uint32(3), ok, uint32(3)})
		same(t, "after a over", summary(ask(t, client, hits(b, 0), hits(c, 0))), []any{ok, ok, uint32(3), ok, uint32(3)})
		// b refuses 4 (3 left): c, decided on another master, gives its unit back.
		same(t, "b over", summary(ask(t, client, hits(b, 4), c)), []any{over, over, uint32(0), ok, uint32(3)})
		same(t, "after b over", summary(ask(t, client, hits(b, 0), hits(c, 0))), []any{ok, ok, uint32(3), ok, uint32(3)})
		// Each alone still admits what is left.
		same(t, "b's last 3", summary(ask(t, client, hits(b, 3))), []any{ok, ok, uint32(0)})
		same(t, "c's last 3", summary(ask(t, client, hits(c, 3))), []any{ok, ok, uint32(0)})
	})

	t.Run("a hot descriptor admits exactly its limit", func(t *testing.T) {
		hotValue := valueOn("hot", addrs[0])
		wideValue := valueOn("wide", addrs[1])
		const callers, each = 16, 10
		var admitted, refused atomic.Int64
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for range each {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					res, err := client.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("hot", hotValue), desc("wide", wideValue)}})
					cancel()
					switch {
					case err != nil:
						t.Error(err)
					case res.OverallCode == ok:
						admitted.Add(1)
					default:
						refused.Add(1)
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%d callers, %d requests of a hot descriptor (limit 50) stacked with one on another master: %d admitted, %d refused", callers, callers*each, admitted.Load(), refused.Load())
		if admitted.Load() != 50 || refused.Load() != callers*each-50 {
			t.Fatalf("admitted %d, refused %d of %d: want exactly the limit, 50", admitted.Load(), refused.Load(), callers*each)
		}
		// The refused requests gave back what they took on the other master.
		same(t, "wide after", summary(ask(t, client, hits(desc("wide", wideValue), 0))), []any{ok, ok, uint32(1000 - 50)})
		same(t, "hot after", summary(ask(t, client, hits(desc("hot", hotValue), 0))), []any{ok, ok, uint32(0)})
	})
}

// waitForFreshHour waits out the last seconds of an hour, so that the
// test's hourly windows (aligned to the epoch) do not end under it.
func waitForFreshHour(t *testing.T) {
	left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour))
	if left < 30*time.Second {
		t.Logf("waiting %v for the next hour's windows", left.Round(time.Second))
		time.Sleep(left + time.Second)
	}
}
