package rls_test

import (
	"context"
	"strconv"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// benchConfig is rlsbench's configuration (benchmarks/cmd/rlsbench),
// its limits high enough that every request is admitted.
const benchConfig = `
domain: bench
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 1000000000}
  - key: generic_key
    value: global
    rate_limit: {unit: second, requests_per_unit: 1000000000}
  - key: tenant
    descriptors:
      - key: path
        rate_limit: {unit: minute, requests_per_unit: 1000000000}
`

// benchRequests are rlsbench's requests: a client address, the global
// key and a tenant-and-path pair each.
func benchRequests() []*rlsv3.RateLimitRequest {
	reqs := make([]*rlsv3.RateLimitRequest, 1000)
	for i := range reqs {
		reqs[i] = &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{
			desc("remote_address", "10.0."+strconv.Itoa(i>>8)+"."+strconv.Itoa(i&255)),
			desc("generic_key", "global"),
			desc("tenant", "t"+strconv.Itoa(i%10), "path", "/api/v1/r"+strconv.Itoa(i/10%10)),
		}}
	}
	return reqs
}

// benchServer is a Server on benchConfig over st, with metrics, as the
// command serves it.
func benchServer(b *testing.B, st store.Store) *rls.Server {
	m, err := rls.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	return newServer(b, st, benchConfig, rls.Options{Metrics: m})
}

// BenchmarkShouldRateLimit is one call of ShouldRateLimit on rlsbench's
// requests: on memstore, the Server's own work and the limiter's; on a
// redis-server, from parallel callers, the whole path of a decision.
func BenchmarkShouldRateLimit(b *testing.B) {
	reqs := benchRequests()
	b.Run("memstore", func(b *testing.B) {
		srv := benchServer(b, memstore.Must())
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := srv.ShouldRateLimit(ctx, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("redis-server", func(b *testing.B) {
		rdb := redis.NewClient(&redis.Options{Addr: testredis.Start(b)})
		b.Cleanup(func() { _ = rdb.Close() })
		st, err := redisstore.New(rdb, redisstore.WithTimeout(storeTimeout))
		if err != nil {
			b.Fatal(err)
		}
		srv := benchServer(b, st)
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for i := 0; pb.Next(); i++ {
				if _, err := srv.ShouldRateLimit(ctx, reqs[i%len(reqs)]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
