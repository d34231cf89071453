package grpclimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestUnixSocketGateway: a gateway that reaches the server over a Unix
// socket (a sidecar) has no IP address. With "unix" among the trusted
// proxies, the metadata it forwards names the client, as from a gateway
// listed by address; without, its calls have no identity, and the error
// handler is told what to list.
func TestUnixSocketGateway(t *testing.T) {
	one := algorithms.FixedWindow{Limit: 1, Window: time.Hour}
	trusted, err := grpclimit.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"unix"}, Header: "X-Forwarded-For"})
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: one}, Identity: trusted}}), unixSock)
	if callWith(t, cc, "x-forwarded-for", "192.0.2.1") || callWith(t, cc, "x-forwarded-for", "192.0.2.2") {
		t.Fatal("two forwarded clients share a limit")
	}
	if !callWith(t, cc, "x-forwarded-for", "192.0.2.1") {
		t.Fatal("a forwarded client's second call went through")
	}

	var logged []error // by the error handler, on the calls' goroutines, each before its call returns
	var mu sync.Mutex
	onError := grpclimit.WithErrorHandler(func(_ context.Context, _ string, err error) { mu.Lock(); logged = append(logged, err); mu.Unlock() })
	cc, _ = serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: one}, Identity: grpclimit.Peer()}}, onError), unixSock)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-forwarded-for", "192.0.2.1")
	_, err = testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("untrusted peer on a Unix socket: got %v, want Unauthenticated", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || !errors.Is(logged[0], keyfunc.ErrNoKey) || !strings.Contains(logged[0].Error(), `"unix"`) {
		t.Fatalf("the error handler got %v, want one error wrapping ErrNoKey that names the \"unix\" entry", logged)
	}
}
