package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// heldRefunds holds each Refund until release is closed (then sends it to
// the store beneath) or its context ends, and counts the Refunds in
// flight: started gets one value per Refund begun. A refund of identity
// failing fails once released, without reaching the store.
type heldRefunds struct {
	store.Store
	release chan struct{}
	started chan struct{}
	failing string

	mu             sync.Mutex
	inFlight, most int
	sent           map[store.Key]int // refunds sent, per key
}

func newHeldRefunds(s store.Store) *heldRefunds {
	return &heldRefunds{Store: s, release: make(chan struct{}), started: make(chan struct{}, 100), sent: map[store.Key]int{}}
}

// counts returns the Refunds in flight, the most there were at once, and
// a copy of the refunds sent per key.
func (s *heldRefunds) counts() (inFlight, most int, sent map[store.Key]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight, s.most, maps.Clone(s.sent)
}

func (s *heldRefunds) Refund(ctx context.Context, now, at time.Time, refunds []store.Refund) error {
	s.mu.Lock()
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	for _, rf := range refunds {
		s.sent[rf.Check.Key]++
	}
	s.mu.Unlock()
	s.started <- struct{}{}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.release:
	}
	for _, rf := range refunds {
		if rf.Check.Key.Identity == s.failing {
			return refused
		}
	}
	return s.Store.Refund(ctx, now, at, refunds)
}

// TestCloseRefundsAtOnce: Close sends its leases' refunds together, up to
// 16 in flight, not one after another (each may wait for the store's
// timeout), and gives back exactly what each lease held, each refund once.
// A failed refund is Close's error; it does not stop the others.
func TestCloseRefundsAtOnce(t *testing.T) {
	const atOnce = 16 // the most Close sends at once
	for _, tc := range []struct {
		leases int
		fail   bool // one refund fails
	}{{5, false}, {20, false}, {5, true}} {
		t.Run(fmt.Sprintf("%d leases, failing %v", tc.leases, tc.fail), func(t *testing.T) {
			mem := memstore.Must()
			st := newHeldRefunds(mem)
			clk := newClock(bases[0].Truncate(time.Second).Add(100 * time.Millisecond))
			alg := algorithms.FixedWindow{Limit: 100, Window: time.Second}
			lim := newLimiter(t, st, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: 200 * time.Millisecond}}, clk.option())
			peeker := newLimiter(t, mem, []limiter.Rule{{Name: "global", Algorithm: alg}}, clk.option())
			ids := make([]string, tc.leases)
			for i := range ids {
				ids[i] = fmt.Sprint("user", i)
				d, err := lim.Allow(ctx, "global", ids[i])
				if err != nil || !d.Allowed || d.Results[0].Leased != 4 {
					t.Fatalf("%s: %+v, %v; want allowed with a lease of 4", ids[i], d, err)
				}
				if got := remaining(t, peeker, ids[i]); got != 95 {
					t.Fatalf("%s: the store has %d remaining, want 95 (1 admitted, 4 leased)", ids[i], got)
				}
			}
			failing := ids[len(ids)-1]
			if tc.fail {
				st.failing = failing
			}

			closed := make(chan error, 1)
			go func() { closed <- lim.Close() }()
			want := min(tc.leases, atOnce)
			guard := time.After(10 * time.Second) // fails a Close that sends one at a time, rather than hang
			for n := 0; n < want; n++ {
				select {
				case <-st.started:
				case <-guard:
					n = want
				}
			}
			held, _, _ := st.counts()
			close(st.release)
			err := <-closed
			_, most, sent := st.counts()
			if held != want {
				t.Errorf("%d refunds in flight at once before any was answered, want %d", held, want)
			}
			if most != want {
				t.Errorf("at most %d refunds in flight, want %d", most, want)
			}
			if tc.fail != errors.Is(err, limiter.ErrBackend) {
				t.Errorf("Close: %v; want an ErrBackend %v", err, tc.fail)
			}
			for _, id := range ids {
				want := 99 // the 4 leased units back, no more
				if tc.fail && id == failing {
					want = 95 // not given back: stays consumed
				}
				if got := remaining(t, peeker, id); got != want {
					t.Errorf("%s: after Close the store has %d remaining, want %d", id, got, want)
				}
			}
			if len(sent) != tc.leases {
				t.Errorf("refunds sent for %d keys, want %d", len(sent), tc.leases)
			}
			for key, n := range sent {
				if n != 1 {
					t.Errorf("%v: %d refunds sent, want 1", key, n)
				}
			}
			if err := lim.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, _, again := st.counts(); !maps.Equal(again, sent) {
				t.Errorf("second Close sent refunds: %v, then %v", sent, again)
			}
		})
	}
}
