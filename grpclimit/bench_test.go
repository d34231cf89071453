package grpclimit_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// BenchmarkUnary is a unary call over bufconn, client and server in this
// process, without a limit and behind the interceptor on the memstore
// (so that the figure is the interceptor's cost, with the ratelimit
// metadata it sends or without it, and no store's round trip).
func BenchmarkUnary(b *testing.B) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}}, Identity: grpclimit.Metadata("x-api-key")}}
	s := newServer(b, onMemstore(), rules)
	bare := newServer(b, onMemstore(), rules, grpclimit.WithoutMetadata())
	for _, tc := range []struct {
		name string
		opts []grpc.ServerOption
	}{
		{"no limiter", nil},
		{"limited", []grpc.ServerOption{grpc.UnaryInterceptor(s.UnaryServerInterceptor())}},
		{"limited without metadata", []grpc.ServerOption{grpc.UnaryInterceptor(bare.UnaryServerInterceptor())}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cc := serveWith(b, tc.opts...)
			c := testpb.NewTestServiceClient(cc)
			ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "k")
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
