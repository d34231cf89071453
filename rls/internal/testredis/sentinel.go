package testredis

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strconv"
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
	return startSentinel(t, master, masterAddr, nil, conf)
}

// StartSentinelTLS starts a sentinel as StartSentinel does, that serves
// TLS only, with the certificate pair and CA files given, and speaks TLS
// to the master it monitors (tls-replication); it asks no client
// certificate. It answers the tls client config given, which the
// sentinel's certificate must satisfy.
func StartSentinelTLS(t testing.TB, master, masterAddr, certFile, keyFile, caFile string, client *tls.Config, conf ...string) string {
	t.Helper()
	return startSentinel(t, master, masterAddr, client, append([]string{"tls-cert-file " + certFile, "tls-key-file " + keyFile, "tls-ca-cert-file " + caFile,
		"tls-replication yes", "tls-auth-clients no"}, conf...))
}

// startSentinel is StartSentinel; with client, its port serves TLS only
// and its readiness is asked over TLS with client.
func startSentinel(t testing.TB, master, masterAddr string, client *tls.Config, conf []string) string {
	t.Helper()
	host, port, _ := strings.Cut(masterAddr, ":")
	file := filepath.Join(t.TempDir(), "sentinel.conf") // a sentinel rewrites its file
	lines := append([]string{"sentinel monitor " + master + " " + host + " " + port + " 1"}, conf...)
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	own := freePort(t, 0)
	var extra []string
	if client != nil {
		extra = []string{"--port", "0", "--tls-port", strconv.Itoa(own)}
	}
	s := startOn(t, own, file, append([]string{"--sentinel"}, extra...)...)
	password := ""
	for _, l := range conf {
		if p, ok := strings.CutPrefix(l, "requirepass "); ok {
			password = p
		}
	}
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, Password: password, TLSConfig: client})
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
