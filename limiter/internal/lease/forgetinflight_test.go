package lease

import (
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// TestForgetDuringATake: a Reset (Forget) made while a take is in flight
// for the key voids that take's lease, as it voids the leases it finds:
// the take may have consumed its units before the Reset forgot them, so
// spending them after it could admit more than the rule allows. A request
// that waited for the take goes to the store, unleased; a later one finds
// a fresh pool. The lease is not refunded (a Reset voids refunds).
func TestForgetDuringATake(t *testing.T) {
	now := base
	ps := New[string](func() time.Time { return now })
	r := ps.Rule(time.Second, &bucket)
	key := store.Key{Identity: "a"}
	s := &units{left: 100}
	taking := ps.Stack()
	asked, send, err := taking.Add(t.Context(), key, 1, true, &r, &bucket)
	if err != nil || !send || asked == 0 {
		t.Fatalf("take of %d, send %v, %v; want a take", asked, send, err)
	}
	ps.mu.RLock()
	p := ps.pools[key]
	ps.mu.RUnlock()
	p.mu.Lock()
	asked0 := p.demand
	p.mu.Unlock()
	waiter := make(chan [2]any, 1)
	go func() {
		st := ps.Stack()
		n, send, err := st.Add(t.Context(), key, 1, true, &r, &bucket)
		served := st.spend(0).lease != nil
		st.Finish()
		waiter <- [2]any{served, [3]any{n, send, err}}
	}()
	waitForWaiter(t, p, asked0)
	ps.Forget(key) // the Reset, while the take is in flight
	_, l := s.decide(&taking, 1, asked, -1)
	if out := taking.Finish(); len(out) != 0 {
		t.Errorf("the voided lease was refunded: %v", s.refund(out))
	}
	if l == nil || !l.ended || l.free != 0 && !l.refunded {
		t.Errorf("the take's lease after a Forget: %+v, want it ended and voided", l)
	}
	got := <-waiter
	if served := got[0].(bool); served {
		t.Errorf("the waiting request spent the voided take's lease (%v)", got[1])
	}
	st := ps.Stack()
	if n, send, err := st.Add(t.Context(), key, 1, true, &r, &bucket); err != nil || !send || n == 0 {
		t.Errorf("a later request: take of %d, send %v, %v; want a fresh take", n, send, err)
	}
	st.Finish()
}

// waitForWaiter returns once another request asked p, whose demand was
// asked0: one that then waits for the take in flight (p.mu is released
// only as it waits).
func waitForWaiter(t *testing.T, p *pool[string], asked0 int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		waiting := p.demand > asked0
		p.mu.Unlock()
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no request waited for the take")
		}
	}
}
