package limiter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// hangingRefunds fails every Refund with a failed dial until hang, then
// holds each one until its context ends; it records the deadline of each
// Refund that starts once closing is set.
type hangingRefunds struct {
	store.Store
	hang, closing atomic.Bool
	started       atomic.Int32 // Refunds held
	mu            sync.Mutex
	afterClose    []time.Time // the deadlines of the Refunds started once closing
}

func (s *hangingRefunds) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	if !s.hang.Load() {
		return refused
	}
	if s.closing.Load() {
		d, _ := ctx.Deadline()
		s.mu.Lock()
		s.afterClose = append(s.afterClose, d)
		s.mu.Unlock()
	}
	s.started.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// Close makes one last try at each pending slot release, all at once,
// even while the retrier is sending releases one after another to a store
// that holds each until its timeout: once Close has begun, no release is
// sent but by that last try (whose calls share one deadline).
func TestCloseEndsRetriesAtOnce(t *testing.T) {
	st := &hangingRefunds{Store: memstore.Must()}
	lim := newLimiter(t, st, []limiter.Rule{{Name: "inflight", Algorithm: algorithms.Concurrency{Limit: 10, TTL: time.Hour}}})
	for range 6 {
		d, err := lim.Allow(ctx, "inflight", "u")
		if err != nil || !d.Allowed {
			t.Fatalf("%+v, %v", d, err)
		}
		if _, err := lim.Settle(ctx, d, 0); !errors.Is(err, limiter.ErrBackend) {
			t.Fatalf("Settle with the release failing: %v, want an ErrBackend", err)
		}
	}
	st.hang.Store(true)
	// The first retries are held for their timeout while the others come
	// due: the retrier then sends those one after another.
	waitFor := func(n int32) {
		for deadline := time.Now().Add(5 * time.Second); st.started.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d releases retried, want %d", st.started.Load(), n)
			}
		}
	}
	waitFor(1)
	time.Sleep(200 * time.Millisecond)
	waitFor(st.started.Load() + 1)
	st.closing.Store(true)
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, d := range st.afterClose[min(1, len(st.afterClose)):] {
		if !d.Equal(st.afterClose[0]) {
			t.Fatalf("releases sent after Close began, with deadlines %v: want the last try's alone", st.afterClose)
		}
	}
}
