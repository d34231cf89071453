package lease

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

const ms = time.Millisecond

// base is a large instant: 2^51 µs after the epoch.
var base = time.UnixMicro(1 << 51)

// bucket is a token bucket of 100 units refilling 100 a second: a pool
// leasing it for a second takes every 100 ms when short.
var bucket = Algo{Facts: algo.Facts{Leasable: true, Units: true}, Refill: algo.Refill{Size: 100, Rate: 100, Period: time.Second}, Quota: 100}

// units is a store of left units for the steps: a take gets its cost and
// up to give more (all it asks when give is negative), and a refund puts
// units back.
type units struct{ left int }

// decide sends check 0 of st, of cost and its lease asked, to the store.
func (s *units) decide(st *Stack[string], cost, asked, give int) (algorithms.Result, *Lease[string]) {
	if s.left < cost {
		res := algorithms.Result{RetryAfter: 50 * ms, NextAfter: 50 * ms}
		return res, st.Taken(0, Take[string]{At: st.Now(), Cost: cost}, &res)
	}
	leased := min(asked, s.left-cost)
	if give >= 0 {
		leased = min(leased, give)
	}
	s.left -= cost + leased
	res := algorithms.Result{Allowed: true, Remaining: s.left, NextAfter: 10 * ms}
	return res, st.Taken(0, Take[string]{Allowed: true, At: st.Now(), Cost: cost, Leased: leased, Check: "k"}, &res)
}

// refund gives back out's units, and returns how many each gave.
func (s *units) refund(out []Refund[string]) []int {
	var backs []int
	for _, rf := range out {
		s.left += rf.Back
		backs = append(backs, rf.Back)
	}
	return backs
}

// A pool's steps at fixed instants, one check a decision: takes sized to
// the demand, units served from the lease, a lease too short for a cost
// ending (its units refunded), a take ahead installed as the spare while
// the current lease is spent, an expired lease refunded, and a short take
// pacing the pool, which, empty, then refuses with the longer of its pace
// (80 ms left) and the store's wait (10 ms for one unit and 80 ms for 8
// more, less the 20 ms since the take).
func TestStackSteps(t *testing.T) {
	now := base
	ps := New[string](func() time.Time { return now })
	r := ps.Rule(time.Second, &bucket)
	s := &units{left: 100}
	for i, tc := range []struct {
		at         time.Duration
		cost, give int
		want       string
		refunds    []int
	}{
		{at: 0, cost: 1, give: -1, want: "take 4: remaining 99"},
		{at: 10 * ms, cost: 2, give: -1, want: "served: remaining 97"},
		{at: 20 * ms, cost: 3, give: -1, want: "take 12: remaining 94", refunds: []int{2}},
		{at: 30 * ms, cost: 4, give: -1, want: "served: remaining 90"},
		{at: 40 * ms, cost: 5, give: -1, want: "take 24: remaining 85"}, // ahead: the spare
		{at: 50 * ms, cost: 8, give: -1, want: "served: remaining 77"},
		{at: 60 * ms, cost: 1, give: -1, want: "served: remaining 76"}, // from the spare
		{at: 1100 * ms, cost: 1, give: -1, want: "take 12: remaining 75", refunds: []int{23}},
		{at: 1110 * ms, cost: 13, give: 2, want: "take 32: remaining 62"}, // ahead, short: paced
		{at: 1120 * ms, cost: 5, give: -1, want: "served: remaining 57"},
		{at: 1130 * ms, cost: 9, give: -1, want: "refused: retry after 80ms", refunds: []int{7, 2}},
		{at: 1210 * ms, cost: 5, give: -1, want: "take 26: remaining 52"},
	} {
		now = base.Add(tc.at)
		st := ps.Stack()
		asked, send, err := st.Add(context.Background(), store.Key{Identity: "k"}, tc.cost, true, &r, &bucket)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		backs := s.refund(st.Refunds())
		var got string
		if send {
			res, _ := s.decide(&st, tc.cost, asked, tc.give)
			got = fmt.Sprintf("take %d: remaining %d", asked, res.Remaining)
		} else if res, _, _ := st.Result(0, !st.Refused()); res.Allowed {
			got = fmt.Sprintf("served: remaining %d", res.Remaining)
		} else {
			got = fmt.Sprintf("refused: retry after %v", res.RetryAfter)
		}
		backs = append(backs, s.refund(st.Finish())...)
		if got != tc.want || !slices.Equal(backs, tc.refunds) {
			t.Errorf("step %d at %v, cost %d: %s, refunds %v; want %s, refunds %v", i, tc.at, tc.cost, got, backs, tc.want, tc.refunds)
		}
	}
}
