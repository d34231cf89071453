package testredis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartSentinel starts a Redis Sentinel on a free loopback port that
// monitors the master at masterAddr under the name master, with the
// sentinel configuration lines conf added (such as "requirepass ..." or
// "sentinel auth-pass <master> ..."), and returns its address once it
// names that master. The sentinel stops when the test ends.
func StartSentinel(t testing.TB, master, masterAddr string, conf ...string) string {
	t.Helper()
	host, port, _ := strings.Cut(masterAddr, ":")
	file := filepath.Join(t.TempDir(), "sentinel.conf") // a sentinel rewrites its file
	lines := append([]string{"sentinel monitor " + master + " " + host + " " + port + " 1"}, conf...)
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startOn(t, freePort(t, 0), file, "--sentinel")
	password := ""
	for _, l := range conf {
		if p, ok := strings.CutPrefix(l, "requirepass "); ok {
			password = p
		}
	}
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, Password: password})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		addr, err := c.GetMasterAddrByName(context.Background(), master).Result()
		if err == nil && len(addr) == 2 && addr[0]+":"+addr[1] == masterAddr {
			return s.Addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel on %s does not name %s at %s: %v %v", s.Addr, master, masterAddr, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
