package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// server is one rate limit server's process.
type server struct {
	cmd                 *exec.Cmd
	grpcAddr, debugAddr string
	logPath             string
	exited              chan struct{} // closed once the process has been waited for
	waitErr             error         // how it exited, once exited is closed
}

// startServer starts bin with the reference's environment variables,
// configured from runtimeRoot and counting on Redis at redisAddr, its
// ports free loopback ones, its output in dir/name.log; and waits until
// it answers on its gRPC port.
func startServer(ctx context.Context, name, bin, dir, runtimeRoot, redisAddr string) (*server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	s := &server{logPath: filepath.Join(dir, name+".log"), exited: make(chan struct{}),
		grpcAddr:  net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		debugAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2]))}
	logs, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logs.Close() // the child holds its own descriptor
	s.cmd = exec.Command(bin)
	s.cmd.Stdout, s.cmd.Stderr = logs, logs
	s.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"REDIS_SOCKET_TYPE=tcp", "REDIS_URL=" + redisAddr,
		"RUNTIME_ROOT=" + runtimeRoot, "RUNTIME_SUBDIRECTORY=" + runtimeSubdirectory, "RUNTIME_WATCH_ROOT=false",
		"USE_STATSD=false", "LOG_LEVEL=warn",
		"GRPC_HOST=127.0.0.1", "GRPC_PORT=" + strconv.Itoa(ports[0]),
		"HOST=127.0.0.1", "PORT=" + strconv.Itoa(ports[1]),
		"DEBUG_HOST=127.0.0.1", "DEBUG_PORT=" + strconv.Itoa(ports[2]),
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx); err != nil {
		s.kill()
		return nil, fmt.Errorf("%w; its output:\n%s", err, tail(s.logPath))
	}
	return s, nil
}

// readyWithin bounds a server's start.
const readyWithin = 30 * time.Second

// waitReady waits until a call on the gRPC port is answered.
func (s *server) waitReady(ctx context.Context) error {
	c, err := dial(s.grpcAddr, 1)
	if err != nil {
		return err
	}
	defer c.close()
	deadline := time.Now().Add(readyWithin)
	for {
		call, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.stub(0).ShouldRateLimit(call, hotRequest("ready"))
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline):
			return fmt.Errorf("not answering after %v: %w", readyWithin, err)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("exited (%v)", s.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// terminate sends SIGTERM and returns how long the process took to exit,
// or false if it was still running after within and had to be killed.
func (s *server) terminate(within time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, false, err
	}
	select {
	case <-s.exited:
		return time.Since(start), true, nil
	case <-time.After(within):
		s.kill()
		return time.Since(start), false, nil
	}
}

// kill kills the process unless it has exited, and waits for it.
func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close() // held until all are chosen, so that they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail is the end of a log file.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
