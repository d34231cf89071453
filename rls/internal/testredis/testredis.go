// Package testredis starts a redis-server for the module's tests.
package testredis

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Start starts a redis-server on a free loopback port, stopped when the
// test ends, and returns its address once it accepts connections. It
// skips the test when redis-server is not on the PATH, unless
// RATELIMIT_REQUIRE_REDIS=1 makes that a failure.
func Start(t testing.TB) string {
	t.Helper()
	return StartServer(t).Addr
}

// Server is a redis-server of one test, which the test may kill and
// start again on the same address.
type Server struct {
	// Addr is its loopback address, host:port.
	Addr string
	path string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// StartServer starts a redis-server as Start does, with args added to its
// command line, and returns it once it accepts connections.
func StartServer(t testing.TB, args ...string) *Server {
	t.Helper()
	return startOn(t, freePort(t, 0), "", args...)
}

// startOn starts a redis-server on port, with the configuration file
// conf unless it is "".
func startOn(t testing.TB, port int, conf string, args ...string) *Server {
	t.Helper()
	p := strconv.Itoa(port)
	s := &Server{
		Addr: net.JoinHostPort("127.0.0.1", p),
		path: lookPath(t),
		args: append([]string{"--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"}, args...),
	}
	if conf != "" {
		s.args = append([]string{conf}, s.args...) // a file must come first
	}
	t.Cleanup(s.kill)
	s.Restart(t)
	return s
}

// Stop kills the server (SIGKILL, as a crash would) and waits for it to
// exit. Its data is gone.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.kill()
}

func (s *Server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts the server again on its address (after Stop), and
// returns once it accepts connections.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		t.Fatalf("redis-server on %s is running", s.Addr)
	}
	cmd := exec.Command(s.path, s.args...)
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		t.Fatalf("redis-server: %v", err)
	}
	s.cmd = cmd
	s.mu.Unlock()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", s.Addr)
		if err == nil {
			_ = c.Close()
			return
		}
		if i == 250 {
			t.Fatalf("redis-server did not listen on %s: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lookPath finds redis-server, or skips (fails under
// RATELIMIT_REQUIRE_REDIS=1) the test.
func lookPath(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("RATELIMIT_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server is not on the PATH and RATELIMIT_REQUIRE_REDIS=1")
		}
		t.Skip("redis-server is not on the PATH")
	}
	return path
}

// freePort is a loopback port nothing listens on; with plus > 0, port+plus
// is free too (a cluster node's bus port).
func freePort(t testing.TB, plus int) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if plus == 0 {
			return port
		}
		if port+plus > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+plus))); err == nil {
			_ = bus.Close()
			return port
		}
	}
	t.Fatal("no free loopback port pair")
	return 0
}
