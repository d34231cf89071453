// Command grpc serves gRPC's test service behind grpclimit's interceptors
// on a loopback port, then calls it: a plain client until it is refused
// (printing the refusal's RetryInfo and QuotaFailure), and a client
// through grpclimit.Client, which paces its calls by what the server
// advertises.
//
//	go run ./examples/grpc             # from grpclimit/; in-process miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/grpc
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit/examples/internal/redisconn"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func main() {
	rdb, err := redisconn.Connect()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(os.Stdout, rdb, 6); err != nil {
		log.Fatal(err)
	}
}

// rules: 2 unary calls a second per API key (a burst of 2), at most 2 open
// streams per client IP, and 1,000 calls a second in all, decided
// together. A stream's slot expires after a minute if its release is lost
// (a release that fails is retried, but a process that dies cannot): long
// enough for the streams of this service, short enough that a lost slot
// is not an outage.
var rules = []grpclimit.Rule{
	{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 2}}, Identity: grpclimit.Metadata("x-api-key")},
	{Rule: limiter.Rule{Name: "streams", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Minute}}, Identity: grpclimit.Peer()},
	{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.GCRA{Rate: 1000, Period: time.Second, Burst: 1000}}, Identity: grpclimit.Constant("all")},
}

// methods limit the first two rules to their calls; the third limits
// every call.
var methods = []grpclimit.Option{
	grpclimit.WithMethods("per-key", "/grpc.testing.TestService/UnaryCall"),
	grpclimit.WithMethods("streams", "/grpc.testing.TestService/FullDuplexCall"),
}

// run serves the test service on rdb, calls it until refused, then makes
// paced calls through grpclimit.Client, printing what happens.
func run(out io.Writer, rdb redis.Scripter, paced int) error {
	store, err := redisstore.New(rdb)
	if err != nil {
		return err
	}
	lim, err := limiter.New(store, guard.Limits(rules), limiter.WithPrefix("example-grpc"))
	if err != nil {
		return err
	}
	limits, err := grpclimit.NewWithLimiter(lim, rules, methods...)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(limits.StreamServerInterceptor()))
	testpb.RegisterTestServiceServer(srv, echo{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	fmt.Fprintf(out, "serving on %s\n", l.Addr())

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "demo-key")
	plain, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer plain.Close()
	for i := 1; ; i++ {
		var header metadata.MD
		_, err := testpb.NewTestServiceClient(plain).UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.Header(&header))
		fmt.Fprintf(out, "plain call %d: %v; ratelimit: %s\n", i, status.Code(err), header.Get("ratelimit"))
		if err != nil {
			for _, d := range status.Convert(err).Details() {
				switch d := d.(type) {
				case *errdetails.RetryInfo:
					fmt.Fprintf(out, "  RetryInfo: retry in %v\n", d.GetRetryDelay().AsDuration())
				case *errdetails.QuotaFailure:
					for _, v := range d.GetViolations() {
						fmt.Fprintf(out, "  QuotaFailure: %s: %s\n", v.GetSubject(), v.GetDescription())
					}
				}
			}
			break
		}
	}

	var c grpclimit.Client
	obeying, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(c.UnaryClientInterceptor()), grpc.WithStreamInterceptor(c.StreamClientInterceptor()))
	if err != nil {
		return err
	}
	defer obeying.Close()
	start := time.Now()
	for i := 1; i <= paced; i++ {
		if _, err := testpb.NewTestServiceClient(obeying).UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
			return fmt.Errorf("paced call %d: %w", i, err)
		}
	}
	fmt.Fprintf(out, "%d paced calls through grpclimit.Client, all answered OK, in %.1f s\n", paced, time.Since(start).Seconds())
	return nil
}

// echo answers UnaryCall with its payload.
type echo struct {
	testpb.UnimplementedTestServiceServer
}

func (echo) UnaryCall(_ context.Context, in *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{Payload: in.GetPayload()}, nil
}
