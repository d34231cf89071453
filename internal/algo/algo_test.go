package algo_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
)

// Each algorithm's key suffix carries exactly the parameters its stored
// state depends on, and its Params all three.
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		alg                algorithms.Algorithm
		wantSuffix, wantID string
	}{
		{algorithms.FixedWindow{Limit: 5, Window: time.Minute}, "fw60000000", "fw:5:60000000:0"},
		{algorithms.FixedWindow{Limit: 5, Window: time.Minute, Anchored: true}, "fw60000000", "fw:5:60000000:1"},
		{algorithms.SlidingLog{Limit: 3, Window: time.Hour}, "sl3600000000", "sl:3:3600000000:0"},
		{algorithms.SlidingWindow{Limit: 100, Window: time.Minute}, "sw60000000", "sw:100:60000000:0"},
		{algorithms.TokenBucket{Capacity: 10, Rate: 5, Period: time.Second}, "tbe", "tb:10:5:1000000"},
		{algorithms.LeakyBucket{Capacity: 10, Rate: 5, Period: time.Second}, "lbe", "lb:10:5:1000000"},
		{algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 10}, "gce", "gc:5:1000000:10"},
		{algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}, "que", "qu:10:1000000:2000000"},
		{algorithms.Concurrency{Limit: 4, TTL: 30 * time.Second}, "cc30000000", "cc:4:30000000:0"},
	} {
		d, err := algo.Describe(tc.alg)
		if err != nil {
			t.Fatalf("%v: %v", tc.alg, err)
		}
		if got := algo.Table[d.Index].Code; got != tc.wantID[:2] {
			t.Errorf("%v: row %q, want %q", tc.alg, got, tc.wantID[:2])
		}
		if d.KeySuffix != tc.wantSuffix || d.Params != tc.wantID {
			t.Errorf("%v: suffix %q params %q, want %q and %q", tc.alg, d.KeySuffix, d.Params, tc.wantSuffix, tc.wantID)
		}
	}
}

// An invalid algorithm, none, or a pointer to one is an ErrInvalid, and
// the pointer's methods never run (a nil one would panic).
func TestDescribeRefuses(t *testing.T) {
	for _, alg := range []algorithms.Algorithm{nil, algorithms.GCRA{}, (*algorithms.GCRA)(nil), &algorithms.FixedWindow{Limit: 1, Window: time.Second}} {
		if _, err := algo.Describe(alg); !errors.Is(err, algorithms.ErrInvalid) {
			t.Errorf("%#v: %v, want ErrInvalid", alg, err)
		}
	}
}
