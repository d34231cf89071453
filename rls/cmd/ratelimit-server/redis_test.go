package main_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// exampleDir is the variables of a runtime directory holding the
// example configuration: with REDIS_URL, an unset RUNTIME_ROOT is the
// reference's default, not the example.
func exampleDir(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, env := runtimeDir(t, map[string]string{"example.yaml": string(src)})
	return env
}

// decidesOn starts the server with env on the example configuration and
// expects it to decide real requests.
func decidesOn(t *testing.T, bin string, env ...string) {
	t.Helper()
	cmd, p, rest := start(t, bin, append(exampleDir(t), env...)...)
	decidesExample(t, p.grpc)
	stop(t, cmd, rest)
}

// failsNaming expects the server with env to stop at start with an error
// naming name, and never showing secret.
func failsNaming(t *testing.T, bin, name, secret string, env ...string) {
	t.Helper()
	out := startFails(t, bin, append(exampleDir(t), env...)...)
	if !strings.Contains(out, name) || secret != "" && strings.Contains(out, secret) {
		t.Errorf("%v: the error does not name %s (or shows the secret):\n%s", env, name, out)
	}
}

// TestRuntimeRootDefaultOnRedis: with REDIS_URL and no RUNTIME_ROOT,
// the server reads the reference's /srv/runtime_data/current, never the
// example: missing there, it stops at start naming the directory.
func TestRuntimeRootDefaultOnRedis(t *testing.T) {
	if _, err := os.Stat("/srv/runtime_data/current"); err == nil {
		t.Skip("/srv/runtime_data/current exists on this machine")
	}
	out := startFails(t, build(t), "REDIS_URL="+testredis.Start(t), "RUNTIME_ROOT=")
	if !strings.Contains(out, "/srv/runtime_data/current/config") {
		t.Errorf("the error does not name the default runtime directory:\n%s", out)
	}
}

func TestRedisAuth(t *testing.T) {
	srv := testredis.StartServer(t, "--requirepass", "s3cret")
	bin := build(t)
	url := "REDIS_URL=" + srv.Addr
	decidesOn(t, bin, url, "REDIS_AUTH=s3cret")
	srv.Stop(t) // fresh counts for the reference's user:password form
	srv.Restart(t)
	decidesOn(t, bin, url, "REDIS_AUTH=default:s3cret")
	failsNaming(t, bin, "REDIS_AUTH", "", url)
	failsNaming(t, bin, "REDIS_AUTH", "wr0ng", url, "REDIS_AUTH=wr0ng")
}

// TestRedisTLS: Redis serves TLS only, with a certificate for
// redis.example (not the address dialled) and requires client
// certificates of its CA.
func TestRedisTLS(t *testing.T) {
	ca, other := newCA(t, "redis-ca"), newCA(t, "other-ca")
	cert, key := ca.issue(t, "redis", x509.ExtKeyUsageServerAuth, "redis.example")
	srv := testredis.StartTLS(t, cert, key, ca.file)
	clientCert, clientKey := ca.issue(t, "client", x509.ExtKeyUsageClientAuth, "client.example")
	bin := build(t)
	tlsEnv := []string{"REDIS_URL=" + srv.Addr, "REDIS_TLS=true", "REDIS_TLS_CACERT=" + ca.file,
		"REDIS_TLS_CLIENT_CERT=" + clientCert, "REDIS_TLS_CLIENT_KEY=" + clientKey}
	with := func(vars ...string) []string { return append(append([]string{}, tlsEnv...), vars...) }
	decidesOn(t, bin, with("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true")...)
	failsNaming(t, bin, "REDIS_TLS", "", with()...) // the name is checked
	failsNaming(t, bin, "REDIS_TLS", "", with("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true", "REDIS_TLS_CACERT="+other.file)...)
	failsNaming(t, bin, "REDIS_TLS", "", with("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true", "REDIS_TLS_CLIENT_CERT=", "REDIS_TLS_CLIENT_KEY=")...)
	failsNaming(t, bin, "REDIS_TLS_CACERT", "", with("REDIS_TLS_CACERT="+filepath.Join(t.TempDir(), "missing.pem"))...)
}

// TestRedisTLSName: without REDIS_TLS_SKIP_HOSTNAME_VERIFICATION, a
// certificate valid for the address dialled is answered.
func TestRedisTLSName(t *testing.T) {
	ca := newCA(t, "redis-ca")
	cert, key := ca.issue(t, "redis", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	srv := testredis.StartTLS(t, cert, key, ca.file, "--tls-auth-clients", "no")
	decidesOn(t, build(t), "REDIS_URL="+srv.Addr, "REDIS_TLS=true", "REDIS_TLS_CACERT="+ca.file)
}

func TestRedisSentinel(t *testing.T) {
	master := testredis.StartServer(t, "--requirepass", "m4ster")
	sentinel := testredis.StartSentinel(t, "rl", master.Addr, "requirepass s3ntinel", "sentinel auth-pass rl m4ster")
	bin := build(t)
	url := "REDIS_URL=rl," + sentinel
	decidesOn(t, bin, "REDIS_TYPE=sentinel", url, "REDIS_AUTH=m4ster", "REDIS_SENTINEL_AUTH=s3ntinel")
	failsNaming(t, bin, "REDIS_SENTINEL_AUTH", "wr0ng", "REDIS_TYPE=sentinel", url, "REDIS_AUTH=m4ster", "REDIS_SENTINEL_AUTH=wr0ng")
	failsNaming(t, bin, "REDIS_URL", "", "REDIS_TYPE=sentinel", "REDIS_URL="+sentinel)
}

// TestRedisSentinelTLS: REDIS_TLS with REDIS_TYPE=sentinel speaks TLS to
// the sentinels and to the master they name, both serving TLS only, with
// passwords on both.
func TestRedisSentinelTLS(t *testing.T) {
	ca, other := newCA(t, "redis-ca"), newCA(t, "other-ca")
	cert, key := ca.issue(t, "redis", x509.ExtKeyUsageServerAuth, "redis.example")
	master := testredis.StartTLS(t, cert, key, ca.file, "--tls-auth-clients", "no", "--requirepass", "m4ster")
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	sentinel := testredis.StartSentinelTLS(t, "rl", master.Addr, cert, key, ca.file, &tls.Config{RootCAs: pool, ServerName: "redis.example"},
		"requirepass s3ntinel", "sentinel auth-pass rl m4ster")
	bin := build(t)
	env := []string{"REDIS_TYPE=sentinel", "REDIS_URL=rl," + sentinel, "REDIS_AUTH=m4ster", "REDIS_SENTINEL_AUTH=s3ntinel",
		"REDIS_TLS=true", "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true"}
	decidesOn(t, bin, append(env, "REDIS_TLS_CACERT="+ca.file)...)
	failsNaming(t, bin, "REDIS_TLS", "", append(env, "REDIS_TLS_CACERT="+other.file)...)
}

// TestRedisCluster decides requests of two descriptors, whose keys are on
// any masters, on a 3-master cluster: all or nothing.
func TestRedisCluster(t *testing.T) {
	addrs := testredis.StartCluster(t, 3)
	_, env := runtimeDir(t, map[string]string{"edge.yaml": "domain: edge\ndescriptors:\n  - key: a\n    rate_limit: {unit: hour, requests_per_unit: 2}\n  - key: b\n    rate_limit: {unit: hour, requests_per_unit: 5}\n"})
	cmd, p, rest := start(t, build(t), append(env, "REDIS_TYPE=cluster", "REDIS_URL="+strings.Join(addrs, ","), "REDIS_POOL_SIZE=4", "REDIS_TIMEOUT=10s")...)
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	both := func(keys ...string) *rlsv3.RateLimitResponse {
		req := &rlsv3.RateLimitRequest{Domain: "edge"}
		for _, k := range keys {
			req.Descriptors = append(req.Descriptors, &ratelimitv3.RateLimitDescriptor{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: k, Value: "u1"}}})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT} {
		if res := both("a", "b"); res.OverallCode != want {
			t.Fatalf("call %d of a and b: %v, want %v", i+1, res, want)
		}
	}
	// The refused call consumed nothing of b: 2 of its 5 are spent.
	if res := both("b"); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].LimitRemaining != 2 {
		t.Fatalf("b after: %v, want OK with 2 remaining", res)
	}
	stop(t, cmd, rest)
}
