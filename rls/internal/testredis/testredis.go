// Package testredis starts a redis-server for the module's tests.
package testredis

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Start starts a redis-server on a free loopback port, stopped when the
// test ends, and returns its address once it accepts connections. It
// skips the test when redis-server is not on the PATH, unless
// RATELIMIT_REQUIRE_REDIS=1 makes that a failure.
func Start(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("RATELIMIT_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server is not on the PATH and RATELIMIT_REQUIRE_REDIS=1")
		}
		t.Skip("redis-server is not on the PATH")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return addr
		}
		if i == 250 {
			t.Fatalf("redis-server did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
