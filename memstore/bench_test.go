package memstore_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"golang.org/x/time/rate"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// The in-process store against golang.org/x/time/rate (one limiter per key
// in a sync.Map) and httprate's in-memory counter, in one run, with
// b.RunParallel goroutines over benchKeys keys and limits too high to deny.

const benchKeys = 10_000

var keyNames = func() []string {
	k := make([]string, benchKeys)
	for i := range k {
		k[i] = "10.0." + strconv.Itoa(i)
	}
	return k
}()

// next spreads goroutines over the keys without sharing a counter.
func next(i *int) string { *i = (*i + 7919) % benchKeys; return keyNames[*i] }

var seq atomic.Int64

func BenchmarkMemstoreGCRA(b *testing.B) {
	lim, err := limiter.New(memstore.Must(), []limiter.Rule{{Name: "r", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1))
		for pb.Next() {
			if d, err := lim.Allow(ctx, "r", next(&i)); err != nil || !d.Allowed {
				b.Fatal(d, err)
			}
		}
	})
}

func BenchmarkMemstoreStackOf3(b *testing.B) {
	lim, err := limiter.New(memstore.Must(), []limiter.Rule{
		{Name: "ip", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}},
		{Name: "user", Algorithm: algorithms.TokenBucket{Capacity: 1_000_000, Rate: 1_000_000, Period: time.Second}},
		{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1 << 30, Window: time.Second}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1))
		for pb.Next() {
			k := next(&i)
			if d, err := lim.Decide(ctx, limiter.Check{Rule: "ip", Identity: k, Cost: 1}, limiter.Check{Rule: "user", Identity: k, Cost: 1}, limiter.Check{Rule: "global", Identity: "all", Cost: 1}); err != nil || !d.Allowed {
				b.Fatal(d, err)
			}
		}
	})
}

func BenchmarkXTimeRatePerKey(b *testing.B) {
	var limiters sync.Map
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1))
		for pb.Next() {
			k := next(&i)
			l, ok := limiters.Load(k)
			if !ok {
				l, _ = limiters.LoadOrStore(k, rate.NewLimiter(1_000_000, 1_000_000))
			}
			if !l.(*rate.Limiter).Allow() {
				b.Fatal("denied")
			}
		}
	})
}

func BenchmarkHTTPRateLocalCounter(b *testing.B) {
	counter := httprate.NewLocalLimitCounter(time.Second)
	var mu sync.Mutex // httprate's RateLimiter serializes check and increment
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1))
		for pb.Next() {
			k := next(&i)
			now := time.Now().UTC().Truncate(time.Second)
			mu.Lock()
			cur, prev, err := counter.Get(k, now, now.Add(-time.Second))
			if err == nil && cur+prev < 1_000_000 {
				err = counter.IncrementBy(k, now, 1)
			}
			mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
