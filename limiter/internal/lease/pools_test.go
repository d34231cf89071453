package lease

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Close ends every lease and returns their free units once; a stack after
// it is not served by the pools, and Forget drops a pool's lease without
// a refund.
func TestCloseAndForget(t *testing.T) {
	now := base
	ps := New[string](func() time.Time { return now })
	r := ps.Rule(time.Second, &bucket)
	s := &units{left: 100}
	for _, key := range []store.Key{{Identity: "a"}, {Identity: "b"}} {
		st := ps.Stack()
		asked, send, err := st.Add(t.Context(), key, 1, true, &r, &bucket)
		if err != nil || !send || asked != 4 {
			t.Fatalf("%s: take of %d, send %v, %v; want a take of 4", key, asked, send, err)
		}
		s.decide(&st, 1, asked, -1)
		st.Finish()
	}
	ps.Forget(store.Key{Identity: "a"})
	if got := s.refund(ps.Close()); len(got) != 1 || got[0] != 4 {
		t.Errorf("Close refunded %v, want [4] (b's lease; a's forgotten)", got)
	}
	if got := ps.Close(); got != nil {
		t.Errorf("second Close refunded %v, want nothing", got)
	}
	st := ps.Stack()
	if asked, send, _ := st.Add(t.Context(), store.Key{Identity: "b"}, 1, true, &r, &bucket); asked != 0 || !send {
		t.Errorf("after Close: take of %d, send %v; want the check sent unleased", asked, send)
	}
}

// A pool whose take is in flight is not idle, however long the take
// takes: when the pools are full and a new identity makes room, the lease
// that take brings stays in a pool the pools keep, and Close refunds it.
func TestPoolWithATakeInFlightIsKept(t *testing.T) {
	now := base
	ps := New[string](func() time.Time { return now })
	r := ps.Rule(time.Second, &bucket)
	for i := range maxPools - 1 {
		st := ps.Stack()
		if _, _, err := st.Add(t.Context(), store.Key{Identity: fmt.Sprint("idle-", i)}, 1, true, &r, &bucket); err != nil {
			t.Fatal(err)
		}
		st.Finish() // the store was not asked: the pool holds nothing
	}
	s := &units{left: 100}
	taking := ps.Stack()
	asked, send, err := taking.Add(t.Context(), store.Key{Identity: "k"}, 1, true, &r, &bucket)
	if err != nil || !send || asked == 0 {
		t.Fatalf("take of %d, send %v, %v; want a take", asked, send, err)
	}
	// The store is slow: past the lease, a new identity finds the pools
	// full and drops the idle ones.
	now = now.Add(2 * time.Second)
	other := ps.Stack()
	if _, _, err := other.Add(t.Context(), store.Key{Identity: "new"}, 1, true, &r, &bucket); err != nil {
		t.Fatal(err)
	}
	other.Finish()
	_, l := s.decide(&taking, 1, asked, -1)
	taking.Finish()
	if l == nil || l.free == 0 {
		t.Fatalf("the take brought no lease")
	}
	free := l.free
	if got := s.refund(ps.Close()); !slices.Contains(got, free) {
		t.Errorf("Close refunded %v, want the %d units of the lease whose take was in flight", got, free)
	}
}
