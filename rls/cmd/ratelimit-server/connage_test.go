package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// TestConnectionAge: GRPC_MAX_CONNECTION_AGE closes a connection that
// has lived that long (give or take a tenth) with a GOAWAY, as the
// reference does, so that Envoy's long-lived connections spread over new
// replicas; the client connects again and its calls go on. A value that
// is not a positive duration fails the start, naming the variable.
func TestConnectionAge(t *testing.T) {
	bin := build(t)
	cmd, p, rest := start(t, bin, "REDIS_URL=", "RUNTIME_ROOT=", "GRPC_MAX_CONNECTION_AGE=300ms", "GRPC_MAX_CONNECTION_AGE_GRACE=5s")
	cc, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := rlsv3.NewRateLimitServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := &rlsv3.RateLimitRequest{Domain: "example", Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0.1"}}}}}
	if _, err := client.ShouldRateLimit(ctx, req); err != nil {
		t.Fatal(err)
	}
	for s := cc.GetState(); s == connectivity.Ready; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			t.Fatal("the connection was never closed by the server within 20 s")
		}
	}
	if _, err := client.ShouldRateLimit(ctx, req); err != nil {
		t.Fatalf("after the server aged the connection: %v", err)
	}
	stop(t, cmd, rest)

	for _, kv := range []string{"GRPC_MAX_CONNECTION_AGE=soon", "GRPC_MAX_CONNECTION_AGE=0s", "GRPC_MAX_CONNECTION_AGE_GRACE=-1s"} {
		name, _, _ := strings.Cut(kv, "=")
		if out := startFails(t, bin, "REDIS_URL=", "RUNTIME_ROOT=", kv); !strings.Contains(out, name) {
			t.Errorf("%s: %s, want an error naming %s", kv, out, name)
		}
	}
}
