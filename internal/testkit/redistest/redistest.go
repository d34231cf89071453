// Package redistest starts Redis servers for tests: an in-process miniredis,
// or a real redis-server on a free loopback port, stopped when the test ends.
//
// When redis-server is not installed, Server skips the test with a message,
// unless RATELIMIT_REQUIRE_REDIS=1, which makes it fail instead (CI sets it).
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Mini starts an in-process miniredis and returns it with a client.
func Mini(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

// Server is a real redis-server started for one test.
type Server struct {
	Addr   string
	Client *redis.Client
	cmd    *exec.Cmd
	args   []string
	dir    string // working directory: a replica's RDB files land here
	done   chan struct{}
}

// Start starts redis-server on a free 127.0.0.1 port with persistence off,
// waits until it answers PING, and stops it when the test ends. Extra
// arguments are passed to redis-server (e.g. "--maxmemory", "1mb").
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return startOn(t, 0, extra...)
}

// startOn starts redis-server on port, or on a free port when port is 0.
func startOn(t testing.TB, port int, extra ...string) *Server {
	t.Helper()
	return startWith(t, port, func(p int) []string {
		return append([]string{"--port", strconv.Itoa(p), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"}, extra...)
	})
}

// startWith starts redis-server with the arguments args gives for the port
// (a free one when port is 0), retrying on another port if it fails.
func startWith(t testing.TB, port int, args func(port int) []string) *Server {
	t.Helper()
	path := lookPath(t, "redis-server")
	dir := t.TempDir()
	var lastErr error
	for range 5 {
		p := port
		if p == 0 {
			var err error
			if p, err = freePort(); err != nil {
				t.Fatalf("free port: %v", err)
			}
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), args: args(p), dir: dir}
		if lastErr = s.start(path); lastErr == nil {
			s.Client = redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
			t.Cleanup(func() {
				_ = s.Client.Close()
				s.Stop()
			})
			return s
		}
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

func (s *Server) start(path string) error {
	s.cmd = exec.Command(path, s.args...)
	s.cmd.Dir = s.dir
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server on %s exited at start", s.Addr)
		default:
		}
		if c.Ping(context.Background()).Err() == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("redis-server on %s did not answer PING", s.Addr)
}

// Stop kills the server and waits for it to exit. Stopping twice is fine.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Restart starts the server again on the same port, with an empty dataset
// and an empty script cache.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.start(lookPath(t, "redis-server")); err != nil {
		t.Fatal(err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Backend is a Redis to run behaviour tests against.
type Backend struct {
	Name   string
	Client *redis.Client
}

// Backends returns miniredis and, when redis-server is available, a real
// server (see Start for when it is required).
func Backends(t *testing.T) []Backend {
	t.Helper()
	_, mini := Mini(t)
	out := []Backend{{Name: "miniredis", Client: mini}}
	if _, err := exec.LookPath("redis-server"); err == nil || os.Getenv("RATELIMIT_REQUIRE_REDIS") == "1" {
		out = append(out, Backend{Name: "redis-server", Client: Start(t).Client})
	} else {
		t.Log("redis-server not found: real-Redis cases not run")
	}
	return out
}

// UsedMemory is used_memory from the server's INFO memory.
func UsedMemory(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}
