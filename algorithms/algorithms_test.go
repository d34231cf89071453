package algorithms_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

func TestValidateNamesTheField(t *testing.T) {
	const huge = time.Duration(1 << 62)
	for _, tc := range []struct {
		alg  algorithms.Algorithm
		want string // "" means valid
	}{
		{algorithms.FixedWindow{Limit: 10, Window: time.Second}, ""},
		{algorithms.FixedWindow{Limit: 0, Window: time.Second}, "FixedWindow.Limit must be positive"},
		{algorithms.FixedWindow{Limit: -1, Window: time.Second}, "FixedWindow.Limit must be positive"},
		{algorithms.FixedWindow{Limit: 1, Window: 0}, "FixedWindow.Window must be at least 1ms"},
		{algorithms.FixedWindow{Limit: 1, Window: time.Microsecond}, "FixedWindow.Window must be at least 1ms"},
		{algorithms.FixedWindow{Limit: 1 << 20, Window: huge}, "FixedWindow.Window"},
		{algorithms.FixedWindow{Limit: 10_000, Window: 30 * 24 * time.Hour}, ""},
		{algorithms.FixedWindow{Limit: 3_000_000, Window: time.Hour}, ""},
		{algorithms.FixedWindow{Limit: 1 << 53, Window: time.Second}, "FixedWindow.Limit is too large"},
		{algorithms.SlidingLog{Limit: 10, Window: time.Minute}, ""},
		{algorithms.SlidingLog{Limit: 100_001, Window: time.Minute}, "SlidingLog.Limit must be at most"},
		{algorithms.SlidingLog{Limit: 5, Window: -time.Second}, "SlidingLog.Window"},
		{algorithms.SlidingWindow{Limit: 100, Window: time.Minute}, ""},
		{algorithms.SlidingWindow{Limit: 0, Window: time.Minute}, "SlidingWindow.Limit"},
		{algorithms.SlidingWindow{Limit: 1 << 40, Window: time.Hour}, "SlidingWindow.Window of 1h0m0s times Limit"},
		{algorithms.TokenBucket{Capacity: 10, Rate: 5, Period: time.Second}, ""},
		{algorithms.TokenBucket{Capacity: 0, Rate: 5, Period: time.Second}, "TokenBucket.Capacity"},
		{algorithms.TokenBucket{Capacity: 10, Rate: 0, Period: time.Second}, "TokenBucket.Rate"},
		{algorithms.TokenBucket{Capacity: 10, Rate: 5, Period: 0}, "TokenBucket.Period"},
		{algorithms.LeakyBucket{Capacity: 5, Rate: 1, Period: time.Second}, ""},
		{algorithms.LeakyBucket{Capacity: 5, Rate: -1, Period: time.Second}, "LeakyBucket.Rate"},
		{algorithms.LeakyBucket{Capacity: 5, Rate: 1, Period: huge}, "LeakyBucket.Period"},
		{algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 10}, ""},
		{algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 0}, "GCRA.Burst"},
		{algorithms.GCRA{Rate: 5, Period: time.Nanosecond, Burst: 1}, "GCRA.Period"},
		{algorithms.GCRA{Rate: 1 << 60, Period: time.Second, Burst: 1}, "GCRA.Rate is too large"},
		{algorithms.GCRA{Rate: 1001, Period: time.Millisecond, Burst: 1}, "GCRA.Rate of 1001 per 1ms is more than one per microsecond"},
		{algorithms.GCRA{Rate: 1000, Period: time.Millisecond, Burst: 1}, ""},
		{algorithms.TokenBucket{Capacity: 1 << 30, Rate: 1, Period: 5 * time.Second}, "TokenBucket.Capacity 1073741824 times Period 5s overflows"},
		{algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}, ""},
		{algorithms.Queue{Rate: 10, Period: time.Second}, ""},
		{algorithms.Queue{Rate: 0, Period: time.Second, MaxDelay: time.Second}, "Queue.Rate must be positive"},
		{algorithms.Queue{Rate: 10, Period: 0, MaxDelay: time.Second}, "Queue.Period must be at least 1ms"},
		{algorithms.Queue{Rate: 2000, Period: time.Millisecond}, "Queue.Rate of 2000 per 1ms is more than one per microsecond"},
		{algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: -time.Second}, "Queue.MaxDelay must be between 0"},
		{algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: huge}, "Queue.MaxDelay must be between 0"},
		{algorithms.Queue{Rate: 1, Period: exact.MaxDuration, MaxDelay: exact.MaxDuration}, "Queue.MaxDelay of 87600h0m0s plus a turn of 87600h0m0s"},
		{algorithms.Queue{Rate: 1, Period: time.Second, MaxDelay: exact.MaxDuration - time.Second}, ""},
		{algorithms.Concurrency{Limit: 10, TTL: 30 * time.Second}, ""},
		{algorithms.Concurrency{Limit: 0, TTL: 30 * time.Second}, "Concurrency.Limit must be positive"},
		{algorithms.Concurrency{Limit: 100_001, TTL: 30 * time.Second}, "Concurrency.Limit must be at most 100000"},
		{algorithms.Concurrency{Limit: 10, TTL: 0}, "Concurrency.TTL must be at least 1ms"},
	} {
		err := tc.alg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: unexpected error %v", tc.alg, err)
		case tc.want != "" && (!errors.Is(err, algorithms.ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%#v: got %v, want ErrInvalid mentioning %q", tc.alg, err, tc.want)
		}
	}
}

func TestStringAndPolicy(t *testing.T) {
	for _, tc := range []struct {
		alg    algorithms.Algorithm
		str    string
		policy algorithms.Policy
	}{
		{algorithms.FixedWindow{Limit: 10, Window: time.Second}, "FixedWindow(10 per 1s)", algorithms.Policy{Quota: 10, Window: time.Second}},
		{algorithms.FixedWindow{Limit: 10, Window: time.Minute, Anchored: true}, "FixedWindow(10 per 1m0s, anchored)", algorithms.Policy{Quota: 10, Window: time.Minute}},
		{algorithms.SlidingLog{Limit: 5, Window: time.Minute}, "SlidingLog(5 per 1m0s)", algorithms.Policy{Quota: 5, Window: time.Minute}},
		{algorithms.SlidingWindow{Limit: 100, Window: time.Minute}, "SlidingWindow(100 per 1m0s)", algorithms.Policy{Quota: 100, Window: time.Minute}},
		{algorithms.TokenBucket{Capacity: 10, Rate: 5, Period: time.Second}, "TokenBucket(capacity 10, 5 per 1s)", algorithms.Policy{Quota: 10, Window: 2 * time.Second}},
		{algorithms.LeakyBucket{Capacity: 5, Rate: 1, Period: time.Second}, "LeakyBucket(capacity 5, 1 per 1s)", algorithms.Policy{Quota: 5, Window: 5 * time.Second}},
		{algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 10}, "GCRA(5 per 1s, burst 10)", algorithms.Policy{Quota: 10, Window: 2 * time.Second}},
		{algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}, "Queue(10 per 1s, max delay 2s)", algorithms.Policy{Quota: 21, Window: 2100 * time.Millisecond}},
		{algorithms.Queue{Rate: 3, Period: time.Second, MaxDelay: time.Second}, "Queue(3 per 1s, max delay 1s)", algorithms.Policy{Quota: 3, Window: 1000002 * time.Microsecond}},
		{algorithms.Concurrency{Limit: 10, TTL: 30 * time.Second}, "Concurrency(10 in flight, ttl 30s)", algorithms.Policy{Quota: 10, Window: 30 * time.Second, Unit: "concurrent-requests"}},
	} {
		if got := tc.alg.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
		if got := algorithms.PolicyOf(tc.alg); got != tc.policy {
			t.Errorf("%v: Policy() = %+v, want %+v", tc.alg, got, tc.policy)
		}
	}
}
