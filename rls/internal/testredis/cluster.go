package testredis

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartCluster starts a Redis Cluster of masters redis-server nodes (no
// replicas) on free loopback ports, each serving an equal range of the
// 16384 slots, and returns their addresses once every node reports
// cluster_state:ok. The nodes stop when the test ends.
func StartCluster(t testing.TB, masters int) []string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	addrs := make([]string, masters)
	nodes := make([]*redis.Client, masters)
	for i := range masters {
		port := freePort(t, 10000) // the bus port is port+10000
		s := startOn(t, port, "", "--cluster-enabled", "yes", "--cluster-node-timeout", "2000", "--dir", dir,
			"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"))
		addrs[i] = s.Addr
		nodes[i] = redis.NewClient(&redis.Options{Addr: s.Addr})
		t.Cleanup(func() { _ = nodes[i].Close() })
		first, last := i*16384/masters, (i+1)*16384/masters-1
		if err := nodes[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", first, last).Err(); err != nil {
			t.Fatalf("CLUSTER ADDSLOTSRANGE on %s: %v", s.Addr, err)
		}
	}
	for _, a := range addrs[1:] {
		host, port, _ := strings.Cut(a, ":")
		if err := nodes[0].Do(ctx, "CLUSTER", "MEET", host, port).Err(); err != nil {
			t.Fatalf("CLUSTER MEET %s: %v", a, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, n := range nodes {
		for {
			info, err := n.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(masters)+"\r\n") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster not ok on %s: %v\n%s", addrs[i], err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs
}
