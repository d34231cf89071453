package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
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

// serverQuota is what every limiter of the server modes enforces: too
// high to deny.
var serverQuota = quota{limit: 1_000_000, period: time.Second}

// grpcServer is one server of the gRPC mode: the echo service's server
// options, built on the clients of an env. id names it to -serve.
type grpcServer struct {
	id, name string
	opts     func(e *env) ([]grpc.ServerOption, error)
}

// grpcServers are the gRPC mode's servers: the unary echo service with no
// limiter, behind our interceptor, and behind go-grpc-middleware's
// ratelimit interceptor on redis_rate, plain and on an AutoPipeliner,
// ours again without its ratelimit metadata (grpclimit.WithoutMetadata:
// like for like with a peer that writes none), and no limiter with two
// metadata fields shaped as ours (gRPC's own share of what ours costs
// more with its metadata). The in-process ratios read the first four by
// position.
func grpcServers() []grpcServer {
	q := serverQuota
	limit := redis_rate.Limit{Rate: q.limit, Burst: q.limit, Period: q.period}
	unary := func(i grpc.UnaryServerInterceptor) []grpc.ServerOption {
		return []grpc.ServerOption{grpc.UnaryInterceptor(i)}
	}
	return []grpcServer{
		{"grpc-none", "no limiter", func(*env) ([]grpc.ServerOption, error) { return nil, nil }},
		{"grpc-ours", "ours (grpclimit, gcra)", func(e *env) ([]grpc.ServerOption, error) {
			return oursGRPC(e, q)
		}},
		{"grpc-redis_rate", "go-grpc-middleware ratelimit on redis_rate", func(e *env) ([]grpc.ServerOption, error) {
			return unary(grpcratelimit.UnaryServerInterceptor(redisRateLimit{l: redis_rate.NewLimiter(e.rdb), limit: limit})), nil
		}},
		{"grpc-redis_rate-ap", "go-grpc-middleware ratelimit on redis_rate, autopipelined", func(e *env) ([]grpc.ServerOption, error) {
			return unary(grpcratelimit.UnaryServerInterceptor(redisRateLimit{l: redis_rate.NewLimiter(apRediser{e.ap, e.rdb}), limit: limit})), nil
		}},
		{"grpc-ours-nomd", "ours (grpclimit, gcra), without metadata", func(e *env) ([]grpc.ServerOption, error) {
			return oursGRPC(e, q, grpclimit.WithoutMetadata())
		}},
		{"grpc-none-md", "no limiter, two metadata fields", func(*env) ([]grpc.ServerOption, error) {
			return unary(twoFields), nil
		}},
	}
}

// twoFields sets, with no limiter, header metadata shaped as ours is (a
// ratelimit-policy that stays the same, a ratelimit that changes per call):
// what gRPC itself spends on sending our metadata.
func twoFields(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	r := strconv.FormatInt(time.Now().UnixNano()%100, 10)
	_ = grpc.SetHeader(ctx, metadata.MD{"ratelimit-policy": {`"per-client";q=100;w=1`}, "ratelimit": {`"per-client";r=` + r + `;t=1`}})
	return h(ctx, req)
}

// oursGRPC is our interceptor on e's Redis, one GCRA rule of quota q per
// client key, with opts.
func oursGRPC(e *env, q quota, opts ...grpclimit.Option) ([]grpc.ServerOption, error) {
	store, err := redisstore.New(e.rdb)
	if err != nil {
		return nil, err
	}
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: gcra(q)},
		Identity: grpclimit.Key(func(ctx context.Context, _ string) (string, error) { return grpcClientKey(ctx), nil })}}
	ours, err := grpclimit.New(store, rules, opts...)
	if err != nil {
		return nil, err
	}
	return []grpc.ServerOption{grpc.UnaryInterceptor(ours.UnaryServerInterceptor())}, nil
}

// grpcBench serves the echo service as each of grpcServers in this
// process over loopback and drives each with goroutines on one client
// connection for d per round, the order rotated each round.
func grpcBench(e *env, goroutines, keys int, d time.Duration, rounds int) grpcRatios {
	servers := grpcServers()
	opts := make([][]grpc.ServerOption, len(servers))
	names := make([]string, len(servers))
	for i, s := range servers {
		o, err := s.opts(e)
		if err != nil {
			fatalf("%s: %v", s.name, err)
		}
		opts[i], names[i] = o, s.name
	}
	results := make([][]stats, len(servers))
	for r := range rounds {
		for i := range servers {
			j := (i + r) % len(servers)
			results[j] = append(results[j], grpcRound(opts[j], goroutines, keyNames(fmt.Sprintf("grpc:r%d:s%d:", r, j), keys), d))
		}
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
	srv := serveGRPC(l, opts)
	defer srv.Stop()
	call, closeClient := grpcCaller(l.Addr().String(), 1)
	defer closeClient()
	return measure(call, goroutines, keys, d)
}

// serveGRPC serves the echo service with opts on l until stopped.
func serveGRPC(l net.Listener, opts []grpc.ServerOption) *grpc.Server {
	srv := grpc.NewServer(opts...)
	testpb.RegisterTestServiceServer(srv, echoService{})
	go func() { _ = srv.Serve(l) }()
	return srv
}

// grpcCaller calls the echo service at addr over conns client
// connections in turn, the key as the call's x-client metadata; a
// ResourceExhausted call is a refusal. Close the connections with the
// function it returns.
func grpcCaller(addr string, conns int) (decideFunc, func()) {
	clients := make([]testpb.TestServiceClient, conns)
	ccs := make([]*grpc.ClientConn, conns)
	for i := range ccs {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fatal(err)
		}
		ccs[i], clients[i] = cc, testpb.NewTestServiceClient(cc)
	}
	closeAll := func() {
		for _, cc := range ccs {
			cc.Close()
		}
	}
	var next atomic.Uint32
	return func(ctx context.Context, key string) (bool, error) {
		c := clients[next.Add(1)%uint32(conns)]
		_, err := c.UnaryCall(metadata.AppendToOutgoingContext(ctx, "x-client", key), &testpb.SimpleRequest{})
		if status.Code(err) == codes.ResourceExhausted {
			return false, nil
		}
		return err == nil, err
	}, closeAll
}
