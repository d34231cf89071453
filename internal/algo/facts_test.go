package algo_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
)

// Every algorithm of package algorithms has a row of its own, with its
// facts; Describe and FactsOf give the row's facts, and Describe the
// value's refill.
func TestFacts(t *testing.T) {
	h := time.Hour
	for _, tc := range []struct {
		alg        algorithms.Algorithm
		want       algo.Facts
		wantRefill algo.Refill
	}{
		{algorithms.FixedWindow{Limit: 5, Window: h}, algo.Facts{Leasable: true, WindowBound: true, Units: true}, algo.Refill{}},
		{algorithms.SlidingLog{Limit: 5, Window: h}, algo.Facts{Units: true}, algo.Refill{}},
		{algorithms.SlidingWindow{Limit: 5, Window: h}, algo.Facts{Leasable: true, WindowBound: true, Weighted: true, Units: true}, algo.Refill{}},
		{algorithms.TokenBucket{Capacity: 10, Rate: 2, Period: h}, algo.Facts{Leasable: true, Units: true, Epochs: true, SharedKey: true}, algo.Refill{Size: 10, Rate: 2, Period: h}},
		{algorithms.LeakyBucket{Capacity: 7, Rate: 3, Period: time.Second}, algo.Facts{Leasable: true, Units: true, Epochs: true, SharedKey: true}, algo.Refill{Size: 7, Rate: 3, Period: time.Second}},
		{algorithms.GCRA{Rate: 4, Period: time.Minute, Burst: 9}, algo.Facts{Leasable: true, Units: true, Epochs: true, SharedKey: true}, algo.Refill{Size: 9, Rate: 4, Period: time.Minute}},
		{algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: h}, algo.Facts{Delays: true, Epochs: true, SharedKey: true}, algo.Refill{}},
		{algorithms.Concurrency{Limit: 4, TTL: h}, algo.Facts{InFlight: true, Units: true}, algo.Refill{}},
	} {
		d, err := algo.Describe(tc.alg)
		if err != nil {
			t.Fatalf("%v: %v", tc.alg, err)
		}
		if got := d.Facts; got != tc.want {
			t.Errorf("%v: Describe's facts %+v, want %+v", tc.alg, got, tc.want)
		}
		if got := d.Refill; got != tc.wantRefill {
			t.Errorf("%v: refill %+v, want %+v", tc.alg, got, tc.wantRefill)
		}
		if got, ok := algo.FactsOf(tc.alg); got != tc.want || !ok {
			t.Errorf("%v: FactsOf %+v, %v, want %+v", tc.alg, got, ok, tc.want)
		}
		if wantHold := map[bool]time.Duration{true: h}[tc.want.InFlight]; d.Hold != wantHold {
			t.Errorf("%v: Hold %v, want %v", tc.alg, d.Hold, wantHold)
		}
		if got := algorithms.PolicyOf(tc.alg).InFlight(); got != tc.want.InFlight {
			t.Errorf("%v: Policy.InFlight %v, want the table's %v", tc.alg, got, tc.want.InFlight)
		}
	}
}

// Only an anchored fixed window's windows are each client's own.
func TestClientWindow(t *testing.T) {
	for _, tc := range []struct {
		alg  algorithms.Algorithm
		want bool
	}{
		{algorithms.FixedWindow{Limit: 5, Window: time.Hour, Anchored: true}, true},
		{algorithms.FixedWindow{Limit: 5, Window: time.Hour}, false},
		{algorithms.SlidingWindow{Limit: 5, Window: time.Hour}, false},
	} {
		d, err := algo.Describe(tc.alg)
		if err != nil {
			t.Fatal(err)
		}
		if d.ClientWindow != tc.want {
			t.Errorf("%v: ClientWindow %v, want %v", tc.alg, d.ClientWindow, tc.want)
		}
	}
}

// Each algorithm type of package algorithms has its own row, and every
// row is one algorithm's.
func TestEveryAlgorithmHasARow(t *testing.T) {
	values := []algorithms.Algorithm{
		algorithms.FixedWindow{Limit: 1, Window: time.Second},
		algorithms.SlidingLog{Limit: 1, Window: time.Second},
		algorithms.SlidingWindow{Limit: 1, Window: time.Second},
		algorithms.TokenBucket{Capacity: 1, Rate: 1, Period: time.Second},
		algorithms.LeakyBucket{Capacity: 1, Rate: 1, Period: time.Second},
		algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1},
		algorithms.Queue{Rate: 1, Period: time.Second},
		algorithms.Concurrency{Limit: 1, TTL: time.Second},
	}
	var names []string
	rows := make(map[int]string)
	for _, alg := range values {
		name := reflect.TypeOf(alg).Name()
		names = append(names, name)
		d, err := algo.Describe(alg)
		if err != nil {
			t.Fatalf("%v: %v", alg, err)
		}
		if other, ok := rows[d.Index]; ok {
			t.Errorf("%s and %s share row %d", other, name, d.Index)
		}
		rows[d.Index] = name
	}
	slices.Sort(names)
	if want := algorithmTypes(t, filepath.Join(moduleRoot, "algorithms")); !slices.Equal(names, want) {
		t.Errorf("algorithms tested %v, package algorithms declares %v", names, want)
	}
	if len(rows) != len(algo.Table) {
		t.Errorf("%d algorithms have rows, the table has %d", len(rows), len(algo.Table))
	}
}

// A bucket's or GCRA's refill: half of its size, and n units rounded up
// to the millisecond.
func TestRefill(t *testing.T) {
	for _, tc := range []struct {
		r        algo.Refill
		n        int
		wantHalf time.Duration
		wantTime time.Duration
	}{
		{algo.Refill{Size: 10, Rate: 5, Period: time.Second}, 3, time.Second, 600 * time.Millisecond},
		{algo.Refill{Size: 1, Rate: 3, Period: time.Second}, 1, time.Second / 6, 334 * time.Millisecond},
		{algo.Refill{Size: 365, Rate: 1, Period: 24 * time.Hour}, 0, 365 * 12 * time.Hour, 0},
		{algo.Refill{Size: 1_000_000, Rate: 1_000_000, Period: time.Second}, 1, 500 * time.Millisecond, time.Millisecond},
	} {
		if got := tc.r.Half(); got != tc.wantHalf {
			t.Errorf("%+v: Half %v, want %v", tc.r, got, tc.wantHalf)
		}
		if got := tc.r.Time(tc.n); got != tc.wantTime {
			t.Errorf("%+v: Time(%d) %v, want %v", tc.r, tc.n, got, tc.wantTime)
		}
	}
}
