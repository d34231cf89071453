package memstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// FuzzConfig builds any algorithm from arbitrary numbers. An invalid one
// must fail construction with ErrConfig naming a field; a valid one must
// decide the same in Lua (miniredis) and in the Go model for a few costs,
// whatever its size.
func FuzzConfig(f *testing.F) {
	f.Add(uint8(0), int64(10), int64(1), int64(time.Second), int64(3), int64(1_795_000_000_000_000))
	f.Add(uint8(3), int64(1<<40), int64(-1), int64(0), int64(-5), int64(0))
	f.Add(uint8(5), int64(7), int64(1<<50), int64(time.Millisecond), int64(1<<30), int64(8_000_000_000_000_000))
	_, rdb := redistest.Mini(f)
	f.Fuzz(func(t *testing.T, kind uint8, a, b, dur, cost, at int64) {
		d := time.Duration(dur)
		var alg algorithms.Algorithm
		switch kind % 6 {
		case 0:
			alg = algorithms.FixedWindow{Limit: int(a), Window: d}
		case 1:
			alg = algorithms.SlidingLog{Limit: int(a), Window: d}
		case 2:
			alg = algorithms.SlidingWindow{Limit: int(a), Window: d}
		case 3:
			alg = algorithms.TokenBucket{Capacity: int(a), Rate: int(b), Period: d}
		case 4:
			alg = algorithms.LeakyBucket{Capacity: int(a), Rate: int(b), Period: d}
		default:
			alg = algorithms.GCRA{Rate: int(b), Period: d, Burst: int(a)}
		}
		now := time.UnixMicro(max(0, at) % exact.MaxTime.UnixMicro())
		clock := limiter.WithClock(func() time.Time { return now })
		prefix := limiter.WithPrefix(fmt.Sprintf("cfg%d", runs.Add(1)))
		rules := []limiter.Rule{{Name: "r", Algorithm: alg}}
		lua, err := limiter.New(mwtest.RedisStore(t, rdb, redisstore.WithMinTTL(time.Hour)), rules, clock, prefix)
		if err != nil {
			if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), `rule "r"`) || !strings.Contains(err.Error(), ".") {
				t.Fatalf("%#v: error %v does not name the rule and field", alg, err)
			}
			return
		}
		model, err := limiter.New(memstore.Must(), rules, clock, prefix)
		if err != nil {
			t.Fatal(err)
		}
		quota := algorithms.PolicyOf(alg).Quota
		if quota <= 0 || algorithms.PolicyOf(alg).Window <= 0 || algorithms.PolicyOf(alg).Window > exact.MaxDuration {
			t.Fatalf("%v: policy %+v", alg, algorithms.PolicyOf(alg))
		}
		c := int(min(max(0, cost), int64(quota)+1))
		if _, ok := alg.(algorithms.SlidingLog); ok {
			c = min(c, 5000) // one sorted-set entry per unit
		}
		for _, cost := range []int{c, 1, 0, quota + 1} {
			got, err := lua.Decide(ctx, limiter.Check{Rule: "r", Identity: "x", Cost: cost})
			if err != nil {
				t.Fatalf("%v cost %d: %v", alg, cost, err)
			}
			want, _ := model.Decide(ctx, limiter.Check{Rule: "r", Identity: "x", Cost: cost})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%v at %d µs cost %d:\nlua   %+v\nmodel %+v", alg, now.UnixMicro(), cost, got, want)
			}
		}
	})
}
