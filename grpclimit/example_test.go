package grpclimit_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
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
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// A server with a per-key limit of 2 calls an hour: the third call is
// refused with ResourceExhausted, a RetryInfo and a QuotaFailure naming
// the rule. (On Redis, the store is redisstore.New(rdb).)
func ExampleNew() {
	store := memstore.Must()
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}},
			Identity: grpclimit.Metadata("x-api-key")},
	}
	s, err := grpclimit.New(store, rules)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // after the gRPC server has stopped: closes the limiter New built
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(s.StreamServerInterceptor()))
	cc, stop := serveExample(srv)
	defer stop()

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

// A rule limits every call unless WithMethods names its methods: here
// "unary" limits UnaryCall alone, and EmptyCall goes through undecided.
// A call without the API key "per-key" reads is refused, and told which
// metadata is missing.
func ExampleWithMethods() {
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "unary", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}},
			Identity: grpclimit.Peer()},
		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}},
			Identity: grpclimit.Metadata("x-api-key")},
	}
	s, err := grpclimit.New(memstore.Must(), rules,
		grpclimit.WithMethods("unary", "/grpc.testing.TestService/UnaryCall"),
		grpclimit.WithMethods("per-key", "/grpc.testing.TestService/UnaryCall"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	cc, stop := serveExample(grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor())))
	defer stop()
	c := testpb.NewTestServiceClient(cc)

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "sk-example")
	for range 2 {
		_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{})
		fmt.Println("UnaryCall:", status.Code(err))
	}
	for range 2 {
		_, err := c.EmptyCall(ctx, &testpb.Empty{})
		fmt.Println("EmptyCall:", status.Code(err))
	}
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	fmt.Println(status.Code(err), status.Convert(err).Message())
	// Output:
	// UnaryCall: OK
	// UnaryCall: ResourceExhausted
	// EmptyCall: OK
	// EmptyCall: OK
	// Unauthenticated ratelimit: rate limit per-key needs metadata x-api-key
}

// One limiter under both doors: the HTTP middleware keys the API key
// header, the gRPC server the same key's metadata, hashed alike, so that
// a client spends one quota whichever way it calls.
func ExampleNewWithLimiter() {
	limit := limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}}
	grpcRules := []grpclimit.Rule{{Rule: limit, Identity: grpclimit.Metadata("x-api-key")}}
	httpRules := []middleware.Rule{{Rule: limit, Identity: keyfunc.Header("X-API-Key")}}
	lim, err := limiter.New(memstore.Must(), guard.Limits(grpcRules)) // the same rules as guard.Limits(httpRules)
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	s, err := grpclimit.NewWithLimiter(lim, grpcRules)
	if err != nil {
		log.Fatal(err)
	}
	mw, err := middleware.NewWithLimiter(lim, httpRules)
	if err != nil {
		log.Fatal(err)
	}
	cc, stop := serveExample(grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor())))
	defer stop()

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-API-Key", "sk-example")
	w := httptest.NewRecorder()
	mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	fmt.Println("HTTP:", w.Code)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "sk-example")
	for range 2 {
		_, err := testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{})
		fmt.Println("gRPC:", status.Code(err))
	}
	// Output:
	// HTTP: 200
	// gRPC: OK
	// gRPC: ResourceExhausted
}

// serveExample serves the test service on srv at a loopback port, and
// returns a connection to it and the function that stops both.
func serveExample(srv *grpc.Server) (*grpc.ClientConn, func()) {
	testpb.RegisterTestServiceServer(srv, &echo{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	return cc, func() { cc.Close(); srv.Stop() }
}
