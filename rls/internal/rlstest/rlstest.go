// Package rlstest serves a RateLimitService on a loopback port for the
// tests of the rls module and its command.
package rlstest

import (
	"net"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Serve serves srv on a free loopback port, with opts, until the test
// ends, and returns the gRPC server (for a test that stops it itself) and
// a plain-text client of it.
func Serve(t testing.TB, srv rlsv3.RateLimitServiceServer, opts ...grpc.ServerOption) (*grpc.Server, rlsv3.RateLimitServiceClient) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(opts...)
	rlsv3.RegisterRateLimitServiceServer(gs, srv)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return gs, rlsv3.NewRateLimitServiceClient(conn)
}
