package limiter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// keptRefunds keeps the refunds it passes on, to send them again.
type keptRefunds struct {
	store.Store
	mu   sync.Mutex
	sent [][]store.Refund
	at   []time.Time
}

func (s *keptRefunds) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	s.mu.Lock()
	s.sent, s.at = append(s.sent, append([]store.Refund(nil), r...)), append(s.at, at)
	s.mu.Unlock()
	return s.Store.Refund(ctx, now, at, r)
}

// slotStores are the stores a slot's release is tried on: the memstore,
// miniredis and a real redis-server.
func slotStores(t *testing.T) map[string]store.Store {
	_, mini := redistest.Mini(t)
	srv := redistest.Start(t)
	return map[string]store.Store{
		"memstore":     memstore.Must(),
		"miniredis":    mustStore(redisstore.New(mini)),
		"redis-server": mustStore(redisstore.New(srv.Client)),
	}
}

// Two slots taken at the same instant (as a coalesced batch takes them,
// under one TIME): releasing a and then sending a's release again, as a
// retry after a lost reply does, leaves b's slot held. The limiter names
// each slot's decision (store.Check.Slot), and the release removes that
// decision's slot, not any slot of its instant.
func TestSlotReleaseSentAgainLeavesOtherSlotHeld(t *testing.T) {
	now := time.UnixMicro(exact.MaxTime.UnixMicro() - 987_654_321) // a timestamp near 2^53 µs
	rules := []limiter.Rule{{Name: "two", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Hour}}}
	for name, s := range slotStores(t) {
		st := &keptRefunds{Store: s}
		lim := newLimiter(t, st, rules, limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix("sent-again"))
		a, err := lim.Allow(ctx, "two", "u")
		if err != nil || !a.Allowed {
			t.Fatalf("%s: a: %+v, %v", name, a, err)
		}
		if b, err := lim.Allow(ctx, "two", "u"); err != nil || !b.Allowed || !b.At.Equal(a.At) {
			t.Fatalf("%s: b: %+v, %v", name, b, err)
		}
		if _, err := lim.Settle(ctx, a, 0); err != nil {
			t.Fatalf("%s: release of a: %v", name, err)
		}
		if len(st.sent) != 1 {
			t.Fatalf("%s: %d Refund calls", name, len(st.sent))
		}
		if err := s.Refund(ctx, now, st.at[0], st.sent[0]); err != nil { // a's release, again
			t.Fatalf("%s: a's release sent again: %v", name, err)
		}
		if c, err := lim.Allow(ctx, "two", "u"); err != nil || !c.Allowed {
			t.Fatalf("%s: c, in a's slot: %+v, %v", name, c, err)
		}
		if d, err := lim.Allow(ctx, "two", "u"); err != nil || d.Allowed {
			t.Errorf("%s: a third slot held (%+v, %v): a's release, sent again, released b's", name, d, err)
		}
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// ranThenTimedOut runs each Refund and then, for the first fails calls,
// reports a timeout, as a reply lost after the release ran.
type ranThenTimedOut struct {
	store.Store
	fails atomic.Int32
	calls atomic.Int32
}

func (s *ranThenTimedOut) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	s.calls.Add(1)
	err := s.Store.Refund(ctx, now, at, r)
	if err == nil && s.fails.Add(-1) >= 0 {
		return context.DeadlineExceeded
	}
	return err
}

// A release with an id whose reply was lost (it ran, then timed out) is
// sent again, and running twice releases its own slot once: of two slots
// taken at the same instant, b's stays held.
func TestSlotReleaseTimedOutRetriedExactly(t *testing.T) {
	now := time.UnixMicro(exact.MaxTime.UnixMicro() - 555_555_555)
	rules := []limiter.Rule{{Name: "two", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Hour}}}
	for name, s := range slotStores(t) {
		st := &ranThenTimedOut{Store: s}
		st.fails.Store(2)
		lim := newLimiter(t, st, rules, limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix("timed-out"))
		a, err := lim.Allow(ctx, "two", "u")
		if err != nil || !a.Allowed {
			t.Fatalf("%s: a: %+v, %v", name, a, err)
		}
		if b, err := lim.Allow(ctx, "two", "u"); err != nil || !b.Allowed {
			t.Fatalf("%s: b: %+v, %v", name, b, err)
		}
		if _, err := lim.Settle(ctx, a, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: release of a: %v, want its timeout", name, err)
		}
		for deadline := time.Now().Add(3 * time.Second); st.calls.Load() < 3; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d Refund calls, want the release sent until it succeeds (3)", name, st.calls.Load())
			}
		}
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
		if n := st.calls.Load(); n != 3 {
			t.Errorf("%s: %d Refund calls, want 3", name, n)
		}
		if c, err := lim.Allow(ctx, "two", "u"); err != nil || !c.Allowed {
			t.Fatalf("%s: c, in a's slot: %+v, %v", name, c, err)
		}
		if d, err := lim.Allow(ctx, "two", "u"); err != nil || d.Allowed {
			t.Errorf("%s: a third slot held (%+v, %v): a's release, sent 3 times, released b's", name, d, err)
		}
	}
}
