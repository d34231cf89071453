// Command file serves an HTTP API (a chi router) and gRPC's test service
// with the rate limits of one rules file, ratelimit.yaml, then calls both
// with one API key: its count is shared, so the fourth use is refused on
// either door.
//
//	go run ./examples/file             # from grpclimit/; in-process miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/file
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit/examples/internal/redisconn"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func main() {
	rdb, err := redisconn.Connect()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(os.Stdout, rdb, "examples/file/ratelimit.yaml"); err != nil {
		log.Fatal(err)
	}
}

// run loads the rules at path on rdb, serves both doors on loopback, and
// uses one API key on each in turn, printing what happens.
func run(out io.Writer, rdb redis.Scripter, path string) error {
	store, err := redisstore.New(rdb)
	if err != nil {
		return err
	}
	limits, err := config.Load(path, store)
	if err != nil {
		return err // every problem of the file, each at its line and column
	}
	defer limits.Close()

	r := chi.NewRouter()
	r.With(limits.Middleware("api")).Get("/items", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "items\n")
	})
	api := httptest.NewServer(r)
	defer api.Close()

	calls, err := grpclimit.FromFile(limits)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(calls.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(calls.StreamServerInterceptor()))
	testpb.RegisterTestServiceServer(srv, testpb.UnimplementedTestServiceServer{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	fmt.Fprintf(out, "HTTP on %s, gRPC on %s, rules from %s\n", api.URL, l.Addr(), path)

	for i := 1; i <= 4; i++ {
		if i%2 == 1 {
			req, _ := http.NewRequest(http.MethodGet, api.URL+"/items", nil)
			req.Header.Set("X-API-Key", "demo-key")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			fmt.Fprintf(out, "use %d, over HTTP: %s; RateLimit-Remaining: %s\n", i, res.Status, res.Header.Get("X-RateLimit-Remaining"))
			continue
		}
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "demo-key")
		var header metadata.MD
		_, err := testpb.NewTestServiceClient(cc).EmptyCall(ctx, &testpb.Empty{}, grpc.Header(&header))
		// EmptyCall is unimplemented: a call the limiter admits ends Unimplemented.
		fmt.Fprintf(out, "use %d, over gRPC: %v; ratelimit: %s\n", i, status.Code(err), header.Get("ratelimit"))
	}
	return nil
}
