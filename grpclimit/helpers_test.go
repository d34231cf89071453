package grpclimit_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Full method names of the test service.
const (
	unaryCall  = "/grpc.testing.TestService/UnaryCall"
	emptyCall  = "/grpc.testing.TestService/EmptyCall"
	duplexCall = "/grpc.testing.TestService/FullDuplexCall"
)

// echo is the test service: UnaryCall answers its payload, FullDuplexCall
// echoes each message until the client closes; open counts the duplex
// handlers running and peak the most that ever ran at once.
type echo struct {
	testpb.UnimplementedTestServiceServer
	open, peak atomic.Int64
}

func (*echo) EmptyCall(context.Context, *testpb.Empty) (*testpb.Empty, error) {
	return &testpb.Empty{}, nil
}

func (*echo) UnaryCall(_ context.Context, in *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{Payload: in.GetPayload()}, nil
}

func (e *echo) FullDuplexCall(s grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	n := e.open.Add(1)
	defer e.open.Add(-1)
	for p := e.peak.Load(); n > p && !e.peak.CompareAndSwap(p, n); p = e.peak.Load() {
	}
	for {
		in, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Send(&testpb.StreamingOutputCallResponse{Payload: in.GetPayload()}); err != nil {
			return err
		}
	}
}

// backend is a store to run a test on.
type backend struct {
	name string
	on   func(t *testing.T) limiterOn
}

// backends are the memstore, miniredis and a real redis-server.
func backends() []backend {
	return []backend{
		{"memstore", func(*testing.T) limiterOn { return onMemstore() }},
		{"miniredis", func(t *testing.T) limiterOn { return onRedis(t, miniredis.RunT(t).Addr()) }},
		{"redis-server", func(t *testing.T) limiterOn { return onRedis(t, startRedis(t).addr) }},
	}
}

// limiterOn builds a limiter of rules on a store of a test's.
type limiterOn func(rules []limiter.Rule) (*limiter.Limiter, error)

// onMemstore builds limiters on a memstore of their own.
func onMemstore() limiterOn {
	store := memstore.Must()
	return func(rules []limiter.Rule) (*limiter.Limiter, error) { return limiter.New(store, rules) }
}

// onRedis builds limiters on the Redis at addr.
func onRedis(t testing.TB, addr string) limiterOn {
	store := redisStore(t, addr)
	return func(rules []limiter.Rule) (*limiter.Limiter, error) { return limiter.New(store, rules) }
}

func redisStore(t testing.TB, addr string) store.Store {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	// A timeout long enough for miniredis under the race detector on a
	// loaded machine: a decision that timed out would fail open.
	store, err := redisstore.New(rdb, redisstore.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// redisServer is a redis-server this package's tests started.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts a redis-server on a free 127.0.0.1 port, without
// persistence, and stops it when the test ends. Without redis-server on
// the PATH the test is skipped, unless RATELIMIT_REQUIRE_REDIS=1.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("RATELIMIT_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not found and RATELIMIT_REQUIRE_REDIS=1")
		}
		t.Skip("redis-server not found")
	}
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := &redisServer{addr: "127.0.0.1:" + strconv.Itoa(port)}
		s.cmd = exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.stop)
		rdb := redis.NewClient(&redis.Options{Addr: s.addr})
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if rdb.Ping(context.Background()).Err() == nil {
				rdb.Close()
				return s
			}
		}
		rdb.Close()
		s.stop() // the port was taken meanwhile: another one
	}
	t.Fatal("redis-server did not start")
	return nil
}

// stop kills the server and waits for it to exit.
func (s *redisServer) stop() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// transport is how a test reaches its server: a loopback TCP port, or
// bufconn.
type transport string

const (
	tcp      transport = "tcp"
	pipe     transport = "bufconn"
	unixSock transport = "unix" // a socket file, as a gateway on the same host reaches its server
)

// serve runs the echo service behind s on tr and returns a connection to
// it with the client options given, and the service.
func serve(t testing.TB, s *grpclimit.Server, tr transport, opts ...grpc.DialOption) (*grpc.ClientConn, *echo) {
	t.Helper()
	return serveOpts(t, []grpc.ServerOption{grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(s.StreamServerInterceptor())}, tr, opts...)
}

// serveWith runs the echo service with the server options given on
// bufconn and returns a connection to it.
func serveWith(t testing.TB, opts ...grpc.ServerOption) *grpc.ClientConn {
	cc, _ := serveOpts(t, opts, pipe)
	return cc
}

// serveOpts runs the echo service with the server options given on tr
// and returns a connection to it with the client options given, and the
// service.
func serveOpts(t testing.TB, sopts []grpc.ServerOption, tr transport, opts ...grpc.DialOption) (*grpc.ClientConn, *echo) {
	t.Helper()
	srv := grpc.NewServer(sopts...)
	e := &echo{}
	testpb.RegisterTestServiceServer(srv, e)
	var l net.Listener
	target := "passthrough:///bufconn"
	switch tr {
	case tcp:
		var err error
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		target = l.Addr().String()
	case unixSock:
		dir, err := os.MkdirTemp("", "rl") // short: a socket's path has a small limit
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if l, err = net.Listen("unix", filepath.Join(dir, "s")); err != nil {
			t.Fatal(err)
		}
		target = "unix://" + l.Addr().String()
	case pipe:
		bl := bufconn.Listen(1 << 20)
		l = bl
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return bl.DialContext(ctx) }))
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(target, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc, e
}

// newServer is New on a limiter of rules that on builds, failing the test
// on an error.
func newServer(t testing.TB, on limiterOn, rules []grpclimit.Rule, opts ...grpclimit.Option) *grpclimit.Server {
	t.Helper()
	lim, err := on(guard.Limits(rules))
	if err != nil {
		t.Fatal(err)
	}
	s, err := grpclimit.NewWithLimiter(lim, rules, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// details are a refusal's RetryInfo and QuotaFailure, nil when absent.
func details(err error) (*errdetails.RetryInfo, *errdetails.QuotaFailure) {
	var ri *errdetails.RetryInfo
	var qf *errdetails.QuotaFailure
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			ri = d
		case *errdetails.QuotaFailure:
			qf = d
		}
	}
	return ri, qf
}

// violated names the rules of a QuotaFailure.
func violated(qf *errdetails.QuotaFailure) []string {
	var names []string
	for _, v := range qf.GetViolations() {
		names = append(names, v.GetSubject())
	}
	return names
}
