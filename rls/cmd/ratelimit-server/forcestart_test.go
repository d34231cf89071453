package main_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthOf is the built server's health at p: /healthcheck's status, and
// the gRPC health of "ratelimit".
func healthOf(t *testing.T, p ports) (int, healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	code := healthStatus(t, p.http)
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "ratelimit"})
	if err != nil {
		t.Fatal(err)
	}
	return code, h.GetStatus()
}

// TestForceStartOnFiles: with FORCE_START_WITHOUT_INITIAL_CONFIG, a
// runtime directory that does not load yet (not there, then empty) does
// not stop the server from starting, as in the reference: it answers
// every call OK, without limits, says why on /rlconfig, and applies the
// first version that loads. With HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED
// it is unhealthy (/healthcheck 500, gRPC NOT_SERVING) until that
// version is in force, and a gRPC health watcher hears the change.
func TestForceStartOnFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "rl", "config")
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT="+root, "RUNTIME_SUBDIRECTORY=rl",
		"FORCE_START_WITHOUT_INITIAL_CONFIG=true", "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED=true")
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].GetCurrentLimit() != nil {
		t.Fatalf("without a configuration: %v, want OK without a limit", res)
	}
	if code, h := healthOf(t, p); code != http.StatusInternalServerError || h != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("without a configuration: /healthcheck %d, gRPC %v; want 500 and NOT_SERVING", code, h)
	}
	if page := debugPage(t, p.debug, "/rlconfig"); !strings.Contains(page, "rl/config") {
		t.Errorf("/rlconfig does not say why nothing is loaded:\n%s", page)
	}

	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{Service: "ratelimit"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := w.Recv(); err != nil || res.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch: %v %v, want NOT_SERVING first", res, err)
	}

	if err := os.MkdirAll(dir, 0o700); err != nil { // an empty directory: still nothing to load
		t.Fatal(err)
	}
	replaceFile(t, filepath.Join(dir, "mine.yaml"), "domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: 1}\n")
	if res, err := w.Recv(); err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch once a version loaded: %v %v, want SERVING", res, err)
	}
	if code, h := healthOf(t, p); code != http.StatusOK || h != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("with a configuration: /healthcheck %d, gRPC %v; want 200 and SERVING", code, h)
	}
	call(t, p.grpc, "mine", "user", "u1")
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("the second call of the day: %v, want OVER_LIMIT", res)
	}
	stop(t, cmd, rest)

	// Without FORCE_START_WITHOUT_INITIAL_CONFIG, a directory that does
	// not load stops the start, as before.
	if out := startFails(t, build(t), "REDIS_URL=", "RUNTIME_ROOT="+t.TempDir(), "RUNTIME_SUBDIRECTORY=rl"); !strings.Contains(out, "rl/config") {
		t.Errorf("no directory, no force start: %s, want an error naming it", out)
	}
}
