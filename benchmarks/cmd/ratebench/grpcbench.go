package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-redis/redis_rate/v10"
	grpcratelimit "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// echoService answers UnaryCall with its payload.
type echoService struct {
	testpb.UnimplementedTestServiceServer
}

func (echoService) UnaryCall(_ context.Context, in *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{Payload: in.GetPayload()}, nil
}

// grpcClientKey is the identity both interceptors limit: the x-client
// metadata the load generator sets, so both pay the same extraction.
func grpcClientKey(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-client"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// redisRateLimit is go-grpc-middleware's ratelimit.Limiter on a redis_rate
// limiter: Allow, an error to refuse (the interceptor answers
// ResourceExhausted), nil when Redis fails (fail open, like ours by
// default).
type redisRateLimit struct {
	l     *redis_rate.Limiter
	limit redis_rate.Limit
}

var errLimited = errors.New("rate limited")

func (r redisRateLimit) Limit(ctx context.Context) error {
	res, err := r.l.Allow(ctx, grpcClientKey(ctx), r.limit)
	if err != nil || res.Allowed > 0 {
		return nil
	}
	return errLimited
}

// grpcRatios are our interceptor's calls/s and p99 over a peer's: the
// plain peer (go-grpc-middleware's ratelimit on redis_rate) and the better
// of it and the same on an AutoPipeliner (the one with more calls/s).
type grpcRatios struct {
	plain, plainP99 float64
	best, bestP99   float64
}

// grpcBench serves a unary echo service four ways over loopback (no
// limiter, our interceptor, go-grpc-middleware's ratelimit interceptor on
// redis_rate, and the same on an AutoPipeliner) and drives each with
// goroutines for d per round, the order rotated each round.
func grpcBench(e *env, goroutines, keys int, d time.Duration, rounds int) grpcRatios {
	q := quota{limit: 1_000_000, period: time.Second}
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: gcra(q)},
		Identity: grpclimit.Key(func(ctx context.Context, _ string) (string, error) { return grpcClientKey(ctx), nil })}}
	store, err := redisstore.New(e.rdb)
	if err != nil {
		fatal(err)
	}
	ours, err := grpclimit.New(store, rules)
	if err != nil {
		fatal(err)
	}
	limit := redis_rate.Limit{Rate: q.limit, Burst: q.limit, Period: q.period}
	peer := grpcratelimit.UnaryServerInterceptor(redisRateLimit{l: redis_rate.NewLimiter(e.rdb), limit: limit})
	peerPipelined := grpcratelimit.UnaryServerInterceptor(redisRateLimit{l: redis_rate.NewLimiter(apRediser{e.ap, e.rdb}), limit: limit})
	servers := []struct {
		name string
		opts []grpc.ServerOption
	}{
		{"no limiter", nil},
		{"ours (grpclimit, gcra)", []grpc.ServerOption{grpc.UnaryInterceptor(ours.UnaryServerInterceptor())}},
		{"go-grpc-middleware ratelimit on redis_rate", []grpc.ServerOption{grpc.UnaryInterceptor(peer)}},
		{"go-grpc-middleware ratelimit on redis_rate, autopipelined", []grpc.ServerOption{grpc.UnaryInterceptor(peerPipelined)}},
	}
	results := make([][]stats, len(servers))
	for r := range rounds {
		for i := range servers {
			j := (i + r) % len(servers)
			results[j] = append(results[j], grpcRound(servers[j].opts, goroutines, keyNames(fmt.Sprintf("grpc:r%d:s%d:", r, j), keys), d))
		}
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.name
	}
	printServers(fmt.Sprintf("gRPC: unary echo over loopback, %d client goroutines on one connection", goroutines), "calls/s", names, results)
	o, p, best := median(results[1]), median(results[2]), median(results[3])
	if p.ops >= best.ops {
		best = p
	}
	return grpcRatios{plain: o.ops / p.ops, plainP99: float64(o.p99) / float64(p.p99),
		best: o.ops / best.ops, bestP99: float64(o.p99) / float64(best.p99)}
}

// grpcRound serves the echo service with opts on a loopback port for one
// measurement.
func grpcRound(opts []grpc.ServerOption, goroutines int, keys []string, d time.Duration) stats {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	srv := grpc.NewServer(opts...)
	testpb.RegisterTestServiceServer(srv, echoService{})
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fatal(err)
	}
	defer cc.Close()
	c := testpb.NewTestServiceClient(cc)
	return measure(func(ctx context.Context, key string) (bool, error) {
		_, err := c.UnaryCall(metadata.AppendToOutgoingContext(ctx, "x-client", key), &testpb.SimpleRequest{})
		if status.Code(err) == codes.ResourceExhausted {
			return false, nil
		}
		return err == nil, err
	}, goroutines, keys, d)
}
