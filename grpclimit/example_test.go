package grpclimit_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// A server with a per-key limit of 2 calls an hour: the third call is
// refused with ResourceExhausted, a RetryInfo and a QuotaFailure naming
// the rule. (On Redis, the store is redisstore.New(rdb).)
func ExampleNew() {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}}, Key: grpclimit.Metadata("x-api-key")}}
	lim, err := limiter.New(memstore.Must(), guard.Limits(rules))
	if err != nil {
		log.Fatal(err)
	}
	s, err := grpclimit.NewWithLimiter(lim, rules)
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(s.StreamServerInterceptor()))
	testpb.RegisterTestServiceServer(srv, &echo{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "sk-example")
	for range 3 {
		var header metadata.MD
		_, err := testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.Header(&header))
		fmt.Println(status.Code(err), header.Get("ratelimit-policy"))
		for _, d := range status.Convert(err).Details() {
			switch d := d.(type) {
			case *errdetails.RetryInfo:
				fmt.Println("retry info:", d.GetRetryDelay().AsDuration() > 0)
			case *errdetails.QuotaFailure:
				fmt.Println("quota failure:", d.GetViolations()[0].GetSubject())
			}
		}
	}
	// Output:
	// OK ["per-key";q=2;w=3600]
	// OK ["per-key";q=2;w=3600]
	// ResourceExhausted ["per-key";q=2;w=3600]
	// retry info: true
	// quota failure: per-key
}
