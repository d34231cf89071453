package main_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// runtimeDir is a RUNTIME_ROOT holding files (name: YAML) in its
// rl/config directory; env are the variables that serve it.
func runtimeDir(t *testing.T, files map[string]string) (dir string, env []string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "rl", "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		replaceFile(t, filepath.Join(dir, name), src)
	}
	return dir, []string{"RUNTIME_ROOT=" + root, "RUNTIME_SUBDIRECTORY=rl"}
}

// replaceFile writes src to path as an editor saves: into another file
// renamed over it, so that a reload never reads half of it.
func replaceFile(t *testing.T, path, src string) {
	t.Helper()
	tmp := path + ".tmp~" // not .yaml: never read as a configuration
	if err := os.WriteFile(tmp, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// dial is a client of the server at addr, closed when the test ends.
func dial(t *testing.T, addr string) rlsv3.RateLimitServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return rlsv3.NewRateLimitServiceClient(conn)
}

// desc is the descriptor of the entries kv: key, value, key, value...
func desc(kv ...string) *ratelimitv3.RateLimitDescriptor {
	d := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

// clearOfEdge returns once at least need is left of the current window
// of length w (windows aligned to the Unix epoch, as the server's fixed
// windows are), waiting for the next window if less is: a sequence of
// calls shorter than need then never crosses a window's end.
func clearOfEdge(t *testing.T, w, need time.Duration) {
	t.Helper()
	if left := w - time.Duration(time.Now().UnixNano()%int64(w)); left < need {
		t.Logf("waiting %v for the next %v window", left, w)
		time.Sleep(left + 50*time.Millisecond)
	}
}

// debugPage is the body of the debug port's page path.
func debugPage(t *testing.T, debug, path string) string {
	t.Helper()
	res, err := http.Get("http://" + debug + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// raceFlags are the build flags of buildForLoad: -race when the tests
// run under the race detector (race_test.go).
var raceFlags []string

// buildForLoad builds the command as build does, with the race detector
// when the tests run with it: a data race in the server under a load
// test then makes it exit with status 66 at the test's stop.
func buildForLoad(t *testing.T) string {
	t.Helper()
	return build(t, raceFlags...)
}
