package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a real Redis Cluster started for one test.
type Cluster struct {
	// Client is a cluster client over every node.
	Client *redis.ClusterClient
	// Nodes are the servers, masters first as created.
	Nodes []*Server
}

// StartCluster starts masters*(1+replicas) redis-server nodes with cluster
// mode on free 127.0.0.1 ports (and their bus ports, +10000), joins them
// with redis-cli --cluster create, waits until every node reports the
// cluster ok with all 16384 slots, and stops them all when the test ends.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	cli := lookPath(t, "redis-cli")
	dir := t.TempDir()
	c := &Cluster{}
	var addrs []string
	for range masters * (1 + replicas) {
		port := freeClusterPort(t)
		s := startOn(t, port, "--cluster-enabled", "yes", "--cluster-node-timeout", "2000", "--cluster-replica-validity-factor", "0", "--repl-diskless-sync-delay", "0",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"), "--dir", dir)
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitOK(t)
	c.Client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 8, DialTimeout: time.Second})
	t.Cleanup(func() { _ = c.Client.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := c.Client.ForEachShard(context.Background(), func(ctx context.Context, n *redis.Client) error {
			return n.Ping(ctx).Err()
		})
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster client not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitOK waits until every node says cluster_state:ok with all slots ok
// and knows every other node, and every replica's link to its master is up
// (its initial sync done).
func (c *Cluster) waitOK(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range c.Nodes {
		for {
			info, err := s.Client.ClusterInfo(context.Background()).Result()
			known := strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))+"\r\n")
			repl, rerr := s.Client.Info(context.Background(), "replication").Result()
			synced := rerr == nil && (strings.Contains(repl, "role:master") || strings.Contains(repl, "master_link_status:up"))
			if err == nil && known && synced && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster not ok on %s: %v\n%s", s.Addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// MasterOf returns the node that serves key's slot now, and a replica of it
// (nil without replicas).
func (c *Cluster) MasterOf(t testing.TB, key string) (master, replica *Server) {
	t.Helper()
	ctx := context.Background()
	n, err := c.Client.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	addr := n.Options().Addr
	for _, s := range c.Nodes {
		if s.Addr == addr {
			master = s
		}
	}
	if master == nil {
		t.Fatalf("no node at %s", addr)
	}
	id, err := master.Client.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Nodes {
		role, err := s.Client.Do(ctx, "ROLE").Slice()
		if err == nil && len(role) >= 3 && role[0] == "slave" && fmt.Sprint(role[2]) == strconv.Itoa(master.port()) {
			nodes, _ := s.Client.ClusterNodes(ctx).Result()
			if strings.Contains(nodes, "myself,slave "+id) {
				replica = s
			}
		}
	}
	return master, replica
}

func (s *Server) port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}

// freeClusterPort finds a port free on 127.0.0.1 whose bus port (+10000) is
// free too.
func freeClusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if p+10000 > 65535 {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000)); err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}

// lookPath finds a Redis binary or skips (fails with
// RATELIMIT_REQUIRE_REDIS=1).
func lookPath(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("RATELIMIT_REQUIRE_REDIS") == "1" {
			t.Fatalf("%s not found and RATELIMIT_REQUIRE_REDIS=1: %v", name, err)
		}
		t.Skipf("%s not found: install redis-server and redis-tools to run the real-Redis tests", name)
	}
	return path
}
