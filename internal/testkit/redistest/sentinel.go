package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the master name the Sentinel setup monitors.
const SentinelMaster = "mymaster"

// Sentinel is a master, a replica and one sentinel started for one test.
type Sentinel struct {
	Master, Replica, Sentinel *Server
	// Client is a go-redis failover client through the sentinel.
	Client *redis.Client
}

// StartSentinel starts a master, a replica of it and a sentinel monitoring
// them (quorum 1, down after 1 s) on free 127.0.0.1 ports, waits until the
// replica is in sync and the sentinel sees it, and stops them all when the
// test ends. Both servers start a replica's sync at once (their diskless
// sync would otherwise wait 5 s for more replicas): the master the
// replica's first, and the replica, once promoted, the old master's.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	s := &Sentinel{Master: Start(t, "--repl-diskless-sync-delay", "0")}
	s.Replica = Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(s.Master.port()), "--repl-diskless-sync-delay", "0")
	dir := t.TempDir()
	s.Sentinel = startWith(t, 0, func(p int) []string {
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", p))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\n"+
			"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 5000\n",
			p, dir, SentinelMaster, s.Master.port(), SentinelMaster, SentinelMaster)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{conf, "--sentinel"}
	})
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr})
	defer sc.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		replicas, err := sc.Replicas(ctx, SentinelMaster).Result()
		if err == nil && len(replicas) == 1 && replicas[0]["master-link-status"] == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel does not see a synced replica: %v %v", replicas, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Client = redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: []string{s.Sentinel.Addr}})
	t.Cleanup(func() { _ = s.Client.Close() })
	return s
}

// Failover asks the sentinel to promote the replica and waits until it is
// the master.
func (s *Sentinel) Failover(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr})
	defer sc.Close()
	if err := sc.Failover(ctx, SentinelMaster).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		addr, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		if err == nil && len(addr) == 2 && addr[1] == strconv.Itoa(s.Replica.port()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel did not promote the replica: %v %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
