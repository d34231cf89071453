package redisstore_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// limiter.Allow over a redis-server, one decision at a time: the client's
// time and allocations per decision (go-redis included; the server runs in
// its own process).
func BenchmarkAllow(b *testing.B) {
	s := redistest.Start(b)
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}}})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = "10.1.0." + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if d, err := lim.Allow(ctx, "r", ids[i%len(ids)]); err != nil || !d.Allowed {
			b.Fatal(d, err)
		}
	}
}
