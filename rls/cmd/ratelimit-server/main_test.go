package main_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// build builds the command into a temporary directory, with flags. The
// tests only run the binary, so that it is built once per set of flags
// for the whole package, into a directory TestMain removes; a build that
// fails fails every test that asks for it.
func build(t *testing.T, flags ...string) string {
	t.Helper()
	builds.Lock()
	defer builds.Unlock()
	key := strings.Join(flags, " ")
	b, ok := builds.done[key]
	if !ok {
		dir := filepath.Join(builds.dir, strconv.Itoa(len(builds.done)))
		b.bin = filepath.Join(dir, "ratelimit-server")
		if b.err = os.Mkdir(dir, 0o700); b.err == nil {
			b.out, b.err = exec.Command("go", append(append([]string{"build"}, flags...), "-o", b.bin, ".")...).CombinedOutput()
		}
		builds.done[key] = b
	}
	if b.err != nil {
		t.Fatalf("go build: %v\n%s", b.err, b.out)
	}
	return b.bin
}

// builds are the binaries build made, by their flags, in dir.
var builds struct {
	sync.Mutex
	dir  string
	done map[string]built
}

// built is a go build's binary, its output and its error.
type built struct {
	bin string
	out []byte
	err error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ratelimit-server-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builds.dir = dir
	builds.done = map[string]built{}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// loopback puts a started server's ports on free loopback ports.
var loopback = []string{"GRPC_HOST=127.0.0.1", "GRPC_PORT=0", "HOST=127.0.0.1", "PORT=0", "DEBUG_HOST=127.0.0.1", "DEBUG_PORT=0"}

// ports are where a started server serves.
type ports struct{ grpc, http, debug string }

// start runs bin with env on free loopback ports and returns the
// addresses it serves on and the rest of its output, read to the end once
// it has exited.
func start(t *testing.T, bin string, env ...string) (*exec.Cmd, ports, <-chan string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), loopback...), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	var addrs [3]string // the first three lines: gRPC, HTTP, debug
	for i := range addrs {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no line %d: %v", i+1, err)
		}
		const on = " on "
		addrs[i] = strings.TrimSpace(line[strings.LastIndex(line, on)+len(on):])
	}
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		rest <- string(b)
	}()
	return cmd, ports{addrs[0], addrs[1], addrs[2]}, rest
}

func call(t *testing.T, addr, domain, key, value string) *rlsv3.RateLimitResponse {
	t.Helper()
	res, err := ask(addr, insecure.NewCredentials(), domain, key, value)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ask calls the server at addr over creds, for one descriptor of one
// entry, waiting at most 10 s.
func ask(addr string, creds credentials.TransportCredentials, domain, key, value string) (*rlsv3.RateLimitResponse, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{
		Domain:      domain,
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: key, Value: value}}}},
	})
}

// decidesExample calls the server at addr, on the example configuration,
// six times for one client: five are OK, the sixth OVER_LIMIT.
func decidesExample(t *testing.T, addr string) {
	t.Helper()
	for i := range 6 {
		res := call(t, addr, "example", "remote_address", "10.0.0.1")
		want := rlsv3.RateLimitResponse_OK
		if i == 5 {
			want = rlsv3.RateLimitResponse_OVER_LIMIT
		}
		if res.OverallCode != want || res.Statuses[0].GetCurrentLimit().GetName() != "per-client" {
			t.Fatalf("call %d: %v, want %v under per-client", i+1, res, want)
		}
	}
}

// startFails runs bin with env as start does and expects it to exit with
// an error within 30 s; it returns its output.
func startFails(t *testing.T, bin string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(append(os.Environ(), loopback...), env...)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("%v: exit %v, want an error at start:\n%s", env, err, out)
	}
	return string(out)
}

// stop sends SIGTERM and expects a clean exit.
func stop(t *testing.T, cmd *exec.Cmd, rest <-chan string) string {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out := <-rest // to the end before Wait, which closes the pipe
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	return out
}

func TestExampleOnMiniredis(t *testing.T) {
	bin := build(t)
	cmd, p, rest := start(t, bin, "REDIS_URL=", "RUNTIME_ROOT=")
	decidesExample(t, p.grpc)
	out := stop(t, cmd, rest)
	if !strings.Contains(out, "grpcurl") || !strings.Contains(out, "http://"+p.http+"/json") || !strings.Contains(out, "stopped") {
		t.Errorf("output does not say how to call it, or that it stopped:\n%s", out)
	}
}

func TestRuntimeDirOnRedis(t *testing.T) {
	redisAddr := testredis.Start(t)
	src := "domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: 1}\n"
	_, env := runtimeDir(t, map[string]string{"mine.yaml": src, ".mine.yaml": src})
	cmd, p, rest := start(t, build(t), append(env, "REDIS_URL="+redisAddr, "REDIS_TYPE=single", "RUNTIME_IGNOREDOTFILES=true")...)
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OK {
		t.Fatalf("first call: %v", res)
	}
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("second call: %v, want OVER_LIMIT", res)
	}
	stop(t, cmd, rest)
}

func TestRuntimeDirReloads(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "rl", "config", "mine.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	src := func(n string) []byte {
		return []byte("domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: " + n + "}\n")
	}
	if err := os.WriteFile(path, src("1"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT="+root, "RUNTIME_SUBDIRECTORY=rl")
	call(t, p.grpc, "mine", "user", "u1")
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("second call: %v, want OVER_LIMIT", res)
	}
	if err := os.WriteFile(path, src("10"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A refused call consumes nothing: call until the new limit admits.
	deadline := time.Now().Add(20 * time.Second)
	for call(t, p.grpc, "mine", "user", "u1").OverallCode != rlsv3.RateLimitResponse_OK {
		if time.Now().After(deadline) {
			t.Fatal("the edit was not reloaded")
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop(t, cmd, rest)
}

func TestHTTPAndDebugPorts(t *testing.T) {
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT=", "LIMIT_RESPONSE_HEADERS_ENABLED=true")
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := get("http://" + p.http + "/healthcheck"); status != http.StatusOK {
		t.Fatalf("/healthcheck: %d %s", status, body)
	}
	req := `{"domain":"example","descriptors":[{"entries":[{"key":"remote_address","value":"10.0.0.9"}]}]}`
	res, err := http.Post("http://"+p.http+"/json", "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/json: %d", res.StatusCode)
	}
	// LIMIT_RESPONSE_HEADERS_ENABLED: the reference's header names.
	if !strings.Contains(string(answer), `"RateLimit-Remaining"`) {
		t.Errorf("/json answer without response headers: %s", answer)
	}
	if _, body := get("http://" + p.debug + "/rlconfig"); !strings.Contains(body, "example.remote_address: unit=HOUR requests_per_unit=5,") {
		t.Fatalf("/rlconfig:\n%s", body)
	}
	// The decision above is counted under its rule, on the debug port.
	if _, body := get("http://" + p.debug + "/metrics"); !strings.Contains(body, "ratelimit_rls_within_limit_total{rule=") {
		t.Errorf("/metrics lacks the rls series:\n%.2000s", body)
	}
	stop(t, cmd, rest)
}

func TestShadowMode(t *testing.T) {
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT=", "SHADOW_MODE=true")
	for i := range 6 {
		res := call(t, p.grpc, "example", "remote_address", "10.0.0.1")
		want := rlsv3.RateLimitResponse_OK
		if i == 5 {
			want = rlsv3.RateLimitResponse_OVER_LIMIT
		}
		if res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].Code != want {
			t.Fatalf("call %d: %v, want OK overall and %v for the descriptor", i+1, res, want)
		}
	}
	stop(t, cmd, rest)
}

// A start that fails says why on stderr and exits 1, whatever LOG_LEVEL
// keeps of the log.
func TestStartFailureIsPrinted(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config", "bad.yaml"), []byte("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(build(t))
	cmd.Env = append(append(os.Environ(), loopback...), "RUNTIME_ROOT="+root, "LOG_LEVEL=warn")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "bad.yaml:4") || !strings.Contains(string(out), "fortnight") {
		t.Errorf("output does not say which file and line failed, and why:\n%s", out)
	}
}
