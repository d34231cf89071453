package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	rlsconfv3 "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/rlstest"
)

// xdsNode is the node id the tests' client subscribes for.
const xdsNode = "rls-test"

// xdsServer is a go-control-plane xDS server on a loopback port, serving
// its snapshot cache's versions and recording every request it receives.
type xdsServer struct {
	cache cachev3.SnapshotCache
	addr  string
	gs    *grpc.Server

	mu       sync.Mutex
	serving  int // how many times serve was called
	requests []*discoveryv3.DiscoveryRequest
	headers  []metadata.MD // of each stream opened
}

// startXDSServer serves an empty cache on a free loopback port.
func startXDSServer(t *testing.T) *xdsServer {
	t.Helper()
	x := &xdsServer{cache: cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil)}
	x.serve(t, "127.0.0.1:0")
	return x
}

// serve serves the cache on addr, which a restart reuses, and starts
// a new record of the requests.
func (x *xdsServer) serve(t *testing.T, addr string) {
	t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	x.addr = ln.Addr().String()
	x.mu.Lock()
	x.serving++
	this := x.serving
	x.requests, x.headers = nil, nil
	x.mu.Unlock()
	// record runs f under the lock unless a later serve replaced this
	// one, whose stopped streams may still be answering.
	record := func(f func()) {
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.serving == this {
			f()
		}
	}
	srv := serverv3.NewServer(context.Background(), x.cache, serverv3.CallbackFuncs{
		StreamOpenFunc: func(ctx context.Context, _ int64, _ string) error {
			md, _ := metadata.FromIncomingContext(ctx)
			record(func() { x.headers = append(x.headers, md) })
			return nil
		},
		StreamRequestFunc: func(_ int64, req *discoveryv3.DiscoveryRequest) error {
			record(func() { x.requests = append(x.requests, req) })
			return nil
		},
	})
	x.gs = grpc.NewServer()
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(x.gs, srv)
	go func() { _ = x.gs.Serve(ln) }()
	t.Cleanup(x.gs.Stop)
}

// restart stops the server and serves the cache again on the same port,
// recording requests afresh.
func (x *xdsServer) restart(t *testing.T) {
	t.Helper()
	x.gs.Stop()
	x.serve(t, x.addr)
}

// set makes resources the version the node is served.
func (x *xdsServer) set(t *testing.T, version string, resources ...*rlsconfv3.RateLimitConfig) {
	t.Helper()
	res := make([]types.Resource, len(resources))
	for i, r := range resources {
		res[i] = r
	}
	snap, err := cachev3.NewSnapshot(version, map[resourcev3.Type][]types.Resource{resourcev3.RateLimitConfigType: res})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.cache.SetSnapshot(context.Background(), xdsNode, snap); err != nil {
		t.Fatal(err)
	}
}

// answered is the client's last answer to a response, an ACK or a NACK
// (a request that carries a nonce), or nil before one.
func (x *xdsServer) answered() *discoveryv3.DiscoveryRequest {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := len(x.requests) - 1; i >= 0; i-- {
		if x.requests[i].GetResponseNonce() != "" {
			return x.requests[i]
		}
	}
	return nil
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// waitAnswer waits for the client's last answer to be an ACK of version
// (when ack) or a NACK keeping version in force, and returns a NACK's
// error detail.
func (x *xdsServer) waitAnswer(t *testing.T, version string, ack bool) string {
	t.Helper()
	var got *discoveryv3.DiscoveryRequest
	waitFor(t, "the answer to version "+version, func() bool {
		got = x.answered()
		return got != nil && got.GetVersionInfo() == version && (got.GetErrorDetail() != nil) == !ack
	})
	if got.GetNode().GetId() != xdsNode || got.GetTypeUrl() != rateLimitConfigType {
		t.Fatalf("answer from node %q for %q, want %q for %q", got.GetNode().GetId(), got.GetTypeUrl(), xdsNode, rateLimitConfigType)
	}
	return got.GetErrorDetail().GetMessage()
}

// perDayConfig is resource name's RateLimitConfig of domain "mine": n
// calls a day per user.
func perDayConfig(name string, n uint32) *rlsconfv3.RateLimitConfig {
	return &rlsconfv3.RateLimitConfig{Name: name, Domain: "mine", Descriptors: []*rlsconfv3.RateLimitDescriptor{
		{Key: "user", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_DAY, RequestsPerUnit: n}},
	}}
}

// testXDSSettings are the client's settings for x, retrying every 20 ms.
func testXDSSettings(x *xdsServer) xdsSettings {
	return xdsSettings{serverURL: x.addr, node: &corev3.Node{Id: xdsNode}, retry: 20 * time.Millisecond, maxRetry: 100 * time.Millisecond}
}

// rlsClient serves svc on a loopback port and returns a client of it.
func rlsClient(t *testing.T, svc *service) rlsv3.RateLimitServiceClient {
	_, client := rlstest.Serve(t, svc)
	return client
}

// remaining calls c for user u of domain "mine", wanting OK, and
// returns limit_remaining.
func remaining(t *testing.T, c rlsv3.RateLimitServiceClient, u string) uint32 {
	t.Helper()
	res, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "mine",
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "user", Value: u}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetOverallCode() != rlsv3.RateLimitResponse_OK {
		t.Fatalf("user %s: %v, want OK", u, res.GetOverallCode())
	}
	return res.GetStatuses()[0].GetLimitRemaining()
}

// inForce reports whether svc's configuration allows n calls a day.
func inForce(svc *service, n string) bool {
	configs, _ := svc.state()
	return strings.Contains(rls.Dump(configs...), "unit=DAY requests_per_unit="+n+",")
}

func TestXDSVersions(t *testing.T) {
	x := startXDSServer(t)
	x.set(t, "1", perDayConfig("mine-limits", 3))
	st := testStore(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	svc, stop, err := startXDS(context.Background(), testXDSSettings(x), func(configs []*rls.Config) (*service, error) {
		return newService(st, rls.Options{}, "", func() ([]*rls.Config, error) { return configs, nil }, log)
	}, log)
	if err != nil || svc == nil {
		t.Fatalf("startXDS: %v, %v", svc, err)
	}
	t.Cleanup(func() { stop(); _ = svc.close() })
	x.waitAnswer(t, "1", true)
	c := rlsClient(t, svc)

	// Version 1: 3 a day.
	for want := uint32(2); want > 0; want-- {
		if got := remaining(t, c, "ann"); got != want {
			t.Fatalf("version 1: remaining %d, want %d", got, want)
		}
	}

	// Version 2 raises the limit to 5: ann's 2 calls are kept.
	x.set(t, "2", perDayConfig("mine-limits", 5))
	x.waitAnswer(t, "2", true)
	if !inForce(svc, "5") {
		t.Fatalf("version 2 ACKed, not in force:\n%s", logs.String())
	}
	if got := remaining(t, c, "ann"); got != 2 {
		t.Fatalf("version 2: remaining %d, want 2 (the count kept across versions)", got)
	}

	// Version 3 has a limit without a unit, and two resources of one
	// domain: NACKed with both problems, version 2 kept.
	bad := perDayConfig("broken", 7)
	bad.Descriptors[0].RateLimit.Unit = rlsconfv3.RateLimitUnit_UNKNOWN
	x.set(t, "3", bad, perDayConfig("mine-limits", 7), perDayConfig("again", 7))
	detail := x.waitAnswer(t, "2", false)
	for _, want := range []string{"xds:broken:", "descriptors[0].rate_limit.unit", `domain "mine" is configured in xds:`} {
		if !strings.Contains(detail, want) {
			t.Errorf("NACK detail %q does not name %s", detail, want)
		}
	}
	if configs, failed := svc.state(); failed == nil || !strings.Contains(failed.Error(), "xds:broken") || !strings.Contains(rls.Dump(configs...), "requests_per_unit=5,") {
		t.Fatalf("after the NACK: error %v; in force:\n%s", failed, rls.Dump(configs...))
	}
	if got := remaining(t, c, "ann"); got != 1 {
		t.Fatalf("after the NACK: remaining %d, want 1 (version 2 in force)", got)
	}

	// The xDS server goes away and comes back: the client connects again
	// and asks from version 2, is sent version 3 again and NACKs it; then
	// version 4 (6 a day) is applied.
	x.restart(t)
	x.waitAnswer(t, "2", false)
	x.mu.Lock()
	first := x.requests[0]
	x.mu.Unlock()
	if first.GetVersionInfo() != "2" || first.GetResponseNonce() != "" {
		t.Errorf("the first request after the restart: version %q nonce %q, want version 2 (in force) and no nonce", first.GetVersionInfo(), first.GetResponseNonce())
	}
	x.set(t, "4", perDayConfig("mine-limits", 6))
	x.waitAnswer(t, "4", true)
	if !inForce(svc, "6") {
		t.Fatal("version 4 ACKed, not in force")
	}
	if got := remaining(t, c, "ann"); got != 1 {
		t.Fatalf("version 4: remaining %d, want 1 (6 less ann's 4 calls; the count kept)", got)
	}
	if !strings.Contains(logs.String(), "connecting again") {
		t.Errorf("the lost stream was not logged:\n%s", logs.String())
	}
}

// syncBuffer is a log buffer a test reads while the server writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// nextLine is the next line the server printed, waiting at most 10 s.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the server's output ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("gave up waiting for the server's output")
	}
	return ""
}

// TestXDSCommand runs the command with CONFIG_TYPE=GRPC_XDS_SOTW: it
// identifies itself to the xDS server as the variables say, rejects a
// version without a domain and does not serve until a valid one came,
// then serves that one and ignores the runtime directory.
func TestXDSCommand(t *testing.T) {
	x := startXDSServer(t)
	bad := perDayConfig("mine-limits", 2)
	bad.Domain = ""
	x.set(t, "1", bad)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var logs syncBuffer
	done := make(chan error, 1)
	getenv := env("CONFIG_TYPE=GRPC_XDS_SOTW", "CONFIG_GRPC_XDS_SERVER_URL="+x.addr, "CONFIG_GRPC_XDS_NODE_ID="+xdsNode,
		"CONFIG_GRPC_XDS_NODE_METADATA=cluster=eg,zone=a=b,junk", "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS=x-tenant:blue",
		"CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL=20ms", "RUNTIME_ROOT="+t.TempDir(), "LOG_LEVEL=info")
	go func() {
		done <- run(ctx, getenv, outW, &logs)
		_ = outW.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	x.waitAnswer(t, "", false) // NACKed with nothing in force
	if !strings.Contains(logs.String(), "waiting for a valid one") {
		t.Errorf("the rejected first version was not logged:\n%s", logs.String())
	}
	x.set(t, "2", perDayConfig("mine-limits", 2))
	on := func(l string) string { return l[strings.LastIndex(l, " on ")+len(" on "):] }
	grpcAddr, _, debugAddr := on(nextLine(t, lines)), nextLine(t, lines), on(nextLine(t, lines))
	if l := nextLine(t, lines); !strings.Contains(l, "the xDS server at "+x.addr) {
		t.Errorf("the greeting does not name the xDS server: %s", l)
	}
	x.waitAnswer(t, "2", true)

	x.mu.Lock()
	node, md := x.requests[0].GetNode(), x.headers[0]
	x.mu.Unlock()
	if m := node.GetMetadata().GetFields(); len(m) != 2 || m["cluster"].GetStringValue() != "eg" || m["zone"].GetStringValue() != "a=b" {
		t.Errorf("node metadata %v, want cluster=eg and zone=a=b", m)
	}
	if got := md.Get("x-tenant"); len(got) != 1 || got[0] != "blue" {
		t.Errorf("x-tenant header %v, want [blue]", got)
	}

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := remaining(t, rlsv3.NewRateLimitServiceClient(conn), "ann"); got != 1 {
		t.Fatalf("remaining %d, want 1 (2 a day from version 2)", got)
	}
	res, err := http.Get("http://" + debugAddr + "/rlconfig")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if !strings.Contains(string(body), "mine.user: unit=DAY requests_per_unit=2,") {
		t.Errorf("/rlconfig:\n%s", body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// TestXDSForceStart serves at once with FORCE_START_WITHOUT_INITIAL_CONFIG,
// every call OK, and applies the first version when it comes.
func TestXDSForceStart(t *testing.T) {
	x := startXDSServer(t)
	xs := testXDSSettings(x)
	xs.forceStart = true
	st := testStore(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, stop, err := startXDS(context.Background(), xs, func(configs []*rls.Config) (*service, error) {
		return newService(st, rls.Options{}, "", func() ([]*rls.Config, error) { return configs, nil }, log)
	}, log)
	if err != nil || svc == nil {
		t.Fatalf("startXDS: %v, %v", svc, err)
	}
	t.Cleanup(func() { stop(); _ = svc.close() })
	c := rlsClient(t, svc)
	if got := remaining(t, c, "ann"); got != 0 {
		t.Fatalf("before any version: remaining %d, want 0 (no limit)", got)
	}
	x.set(t, "1", perDayConfig("mine-limits", 3))
	x.waitAnswer(t, "1", true)
	if got := remaining(t, c, "ann"); got != 2 {
		t.Fatalf("version 1: remaining %d, want 2", got)
	}
}
