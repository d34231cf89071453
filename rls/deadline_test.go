package rls_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// A call whose deadline passes while a paused redis-server keeps its
// decision (the store's timeout far longer) is the caller's end, under
// either failure policy: DEADLINE_EXCEEDED, nothing for the error handler,
// and a failure counted as canceled, not as a timeout of Redis. The
// call's socket stops at the deadline, so its failure can be a network
// timeout a moment before the context's own timer ends it.
func TestCallerDeadlineIsNotARedisFailure(t *testing.T) {
	rdb := startRedis(t)
	for _, failOpen := range []bool{false, true} {
		reg, m := metricsOn(t)
		var reported atomic.Int64
		c := serve(t, backend{name: "redis-server", rdb: rdb}, metricsConfig, rls.Options{Metrics: m, FailOpen: failOpen, OnError: func(error) { reported.Add(1) }})
		req := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "10.0.0.1")}}
		if _, err := c.ShouldRateLimit(context.Background(), req); err != nil { // the library is loaded
			t.Fatal(err)
		}
		if err := rdb.Do(context.Background(), "CLIENT", "PAUSE", 400, "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := c.ShouldRateLimit(ctx, req)
		cancel()
		time.Sleep(500 * time.Millisecond) // the pause ends, the server has answered
		if status.Code(err) != codes.DeadlineExceeded || reported.Load() != 0 {
			t.Errorf("fail open %v: %v, %d errors reported; want DEADLINE_EXCEEDED, none reported", failOpen, err, reported.Load())
		}
		f := series(t, reg)["ratelimit_rls_failures_total"]
		total := 0.0
		for _, n := range f {
			total += n
		}
		if f["canceled"] != 1 || total != 1 {
			t.Errorf("fail open %v: failures by cause %v, want one canceled", failOpen, f)
		}
	}
}
