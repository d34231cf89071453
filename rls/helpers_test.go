package rls_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/rlstest"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// backend is a Redis the tests run on; mini is set for miniredis, whose
// clock the test controls.
type backend struct {
	name string
	rdb  *redis.Client
	mini *miniredis.Miniredis
}

// eachBackend runs fn on miniredis, its clock at a fixed instant, and on
// a redis-server of its own when one is on the PATH.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("miniredis", func(t *testing.T) { fn(t, miniBackend(t)) })
	t.Run("redis-server", func(t *testing.T) {
		fn(t, backend{name: "redis-server", rdb: startRedis(t)})
	})
}

// miniBackend is a miniredis of the test's own, its clock at a fixed
// instant.
func miniBackend(t *testing.T) backend {
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 1, 2, 10, 0, 30, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return backend{name: "miniredis", rdb: rdb, mini: m}
}

// startRedis is a client of a redis-server of the test's own.
func startRedis(t *testing.T) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: testredis.Start(t)})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// freePort is a loopback TCP port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// storeTimeout bounds the tests' Redis calls: far above the store's
// default, so that a machine busy with other work does not fail a
// request the test expects decided.
const storeTimeout = 5 * time.Second

// serve parses src, serves it on b behind a loopback gRPC listener, and
// returns a client of it.
func serve(t *testing.T, b backend, src string, opts rls.Options) rlsv3.RateLimitServiceClient {
	t.Helper()
	s, err := redisstore.New(b.rdb, redisstore.WithTimeout(storeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	return dial(t, newServer(t, s, src, opts, limiter.WithDenyCache(0, 0)))
}

// newServer parses src and returns a Server of it on st, its limiter
// built with limOpts.
func newServer(tb testing.TB, st store.Store, src string, opts rls.Options, limOpts ...limiter.Option) *rls.Server {
	tb.Helper()
	c, err := rls.Parse("test.yaml", []byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	lim, err := limiter.New(st, rls.Limits(c), limOpts...)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := rls.NewServer(lim, []*rls.Config{c}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// dial serves srv on a loopback listener and returns a client of it.
func dial(t *testing.T, srv rlsv3.RateLimitServiceServer) rlsv3.RateLimitServiceClient {
	t.Helper()
	_, client := dialServer(t, srv)
	return client
}

func itoa(n int) string { return strconv.Itoa(n) }

// dialServer serves srv on a loopback listener and returns the gRPC
// server, for the test to stop, and a client of it.
func dialServer(t *testing.T, srv rlsv3.RateLimitServiceServer) (*grpc.Server, rlsv3.RateLimitServiceClient) {
	return rlstest.Serve(t, srv)
}
