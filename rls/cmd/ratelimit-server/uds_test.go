package main_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// socketPath is a path for a Unix socket in a short temporary directory
// (a socket's path has a small limit), removed after the test.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rls")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "rls.sock")
}

// TestGRPCUnixSocket: GRPC_UDS serves the gRPC service on that Unix
// socket instead of GRPC_HOST:GRPC_PORT, as the reference does (Envoy
// reaches a sidecar there through a pipe address). A socket file left by
// a server that died is replaced; the socket is removed at exit; a path
// that another server listens on, or that is not a socket, is an error
// at start, naming GRPC_UDS.
func TestGRPCUnixSocket(t *testing.T) {
	bin := build(t)
	path := socketPath(t)
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false) // as after a crash: the file stays, nothing listens
	stale.Close()

	cmd, p, rest := start(t, bin, "REDIS_URL=", "RUNTIME_ROOT=", "GRPC_UDS="+path)
	if p.grpc != "unix:"+path {
		t.Fatalf("serves gRPC on %q, want unix:%s", p.grpc, path)
	}
	decidesExample(t, p.grpc)
	if out := startFails(t, bin, "REDIS_URL=", "RUNTIME_ROOT=", "GRPC_UDS="+path); !strings.Contains(out, "GRPC_UDS") {
		t.Errorf("a second server on the same socket: %s, want an error naming GRPC_UDS", out)
	}
	// The first still answers there, with its count: the second did not
	// take the socket over.
	if res := call(t, p.grpc, "example", "remote_address", "10.0.0.1"); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Errorf("after the second server failed: %v, want the first's OVER_LIMIT", res)
	}
	if out := stop(t, cmd, rest); !strings.Contains(out, "-unix "+path) {
		t.Errorf("the output does not say how to call it on the socket:\n%s", out)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is left after exit: %v", err)
	}

	notSocket := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notSocket, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := startFails(t, bin, "REDIS_URL=", "RUNTIME_ROOT=", "GRPC_UDS="+notSocket); !strings.Contains(out, "GRPC_UDS") {
		t.Errorf("GRPC_UDS on a regular file: %s, want an error naming GRPC_UDS", out)
	}
	if b, err := os.ReadFile(notSocket); err != nil || string(b) != "keep" {
		t.Errorf("a regular file at GRPC_UDS was touched: %q, %v", b, err)
	}
}
