package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/release"
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

// lostReplies decides each stack on its store and then, for the first
// lose calls, reports err in place of the verdict, as a reply lost after
// the decision ran; with ran false, it reports err without deciding (a
// failure that proves the decision did not run). It counts the refunds
// that have run. It is a remote store, as Redis is.
type lostReplies struct {
	store.Store
	err     error
	ran     bool
	lose    atomic.Int32
	refunds atomic.Int32
	within  atomic.Int64 // the last refund's bound
}

func (s *lostReplies) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	if s.lose.Add(-1) < 0 {
		return s.Store.Decide(ctx, now, checks, results)
	}
	if s.ran {
		if _, err := s.Store.Decide(ctx, now, checks, results); err != nil {
			return store.Verdict{}, err
		}
		clear(results)
	}
	return store.Verdict{}, s.err
}

// Remote makes the store a remote one, as Redis is, whose calls last
// 100 ms at most.
func (s *lostReplies) Remote() time.Duration { return 100 * time.Millisecond }

func (s *lostReplies) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	err := s.Store.Refund(ctx, now, at, r)
	s.within.Store(int64(r[0].Within))
	s.refunds.Add(1) // once it has run
	return err
}

// A decision whose reply was lost after it ran (a timeout, a connection
// lost in use, a caller gone while it was in flight) took its concurrency
// slots with no request to release them: they are released in the
// background, by id, and the slots come back long before their TTL (an
// hour), exactly: the other slot stays held. A failure that proves the
// decision did not run (a failed dial, an error reply) releases nothing.
func TestLostReplyReleasesItsSlots(t *testing.T) {
	rules := []limiter.Rule{
		{Name: "two", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Hour}},
		{Name: "fw", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}},
	}
	for name, s := range slotStores(t) {
		for _, lost := range []struct {
			err error
			ran bool
		}{
			{context.DeadlineExceeded, true},
			{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
			{context.Canceled, true},
			{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false},
			{errors.New("ERR ratelimit: something went wrong"), false},
		} {
			st := &lostReplies{Store: s, err: lost.err, ran: lost.ran}
			lim := newLimiter(t, st, rules, limiter.WithPrefix(fmt.Sprintf("lost-%s-%v", name, lost.err)))
			if a, err := lim.Allow(ctx, "two", "u"); err != nil || !a.Allowed {
				t.Fatalf("%s: the slot that stays held: %+v, %v", name, a, err)
			}
			st.lose.Store(1)
			d, err := lim.Decide(ctx, limiter.Check{Rule: "two", Identity: "u", Cost: 1}, limiter.Check{Rule: "fw", Identity: "u", Cost: 1})
			if err == nil {
				t.Fatalf("%s, %v: the lost decision: %+v, want its error", name, lost.err, d)
			}
			if lost.ran {
				for deadline := time.Now().Add(5 * time.Second); st.refunds.Load() == 0; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s, %v: the lost decision's slot was never released", name, lost.err)
					}
				}
				if w := time.Duration(st.within.Load()); w < 100*time.Millisecond+release.Slack {
					t.Errorf("%s, %v: the release looked %v back, want at least the store's timeout and %v", name, lost.err, w, release.Slack)
				}
				if b, err := lim.Allow(ctx, "two", "u"); err != nil || !b.Allowed {
					t.Errorf("%s, %v: the lost decision's slot is still held: %+v, %v", name, lost.err, b, err)
				}
				if c, err := lim.Allow(ctx, "two", "u"); err != nil || c.Allowed {
					t.Errorf("%s, %v: a third slot (%+v, %v): the release freed the other one", name, lost.err, c, err)
				}
			}
			if err := lim.Close(); err != nil { // sends what is still queued once more
				t.Fatal(err)
			}
			if n := st.refunds.Load(); !lost.ran && n != 0 {
				t.Errorf("%s, %v: %d refunds of a decision that did not run", name, lost.err, n)
			}
		}
	}
}

// overtaken loses the reply of its first decision, which it runs only
// once the first refund after it has run: as Redis, busy, serves a
// decision that waited in one connection after a release sent on another
// (it serves the connections ready at once in any order).
type overtaken struct {
	store.Store
	mu      sync.Mutex
	pending func() // the decision not run yet
	refunds atomic.Int32
}

func (s *overtaken) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil && s.refunds.Load() == 0 {
		checks, results := slices.Clone(checks), slices.Clone(results)
		s.pending = func() { _, _ = s.Store.Decide(context.Background(), now, checks, results) }
		return store.Verdict{}, context.DeadlineExceeded
	}
	return s.Store.Decide(ctx, now, checks, results)
}

func (s *overtaken) Remote() time.Duration { return 100 * time.Millisecond }

func (s *overtaken) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	err := s.Store.Refund(ctx, now, at, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refunds.Add(1) == 1 && s.pending != nil {
		s.pending()
	}
	return err
}

// A lost decision that runs after its release (the release overtook it)
// takes its slot all the same: the release is sent once more after its
// reply, by when a decision that was waiting in Redis with it has run, and
// the slot comes back long before its TTL (an hour).
func TestLostReplyOvertakenByItsRelease(t *testing.T) {
	rules := []limiter.Rule{{Name: "inflight", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Hour}}}
	for name, s := range slotStores(t) {
		st := &overtaken{Store: s}
		lim := newLimiter(t, st, rules, limiter.WithPrefix("overtaken-"+name))
		if d, err := lim.Allow(ctx, "inflight", "u"); err == nil {
			t.Fatalf("%s: the lost decision: %+v, want its error", name, d)
		}
		for deadline := time.Now().Add(3 * time.Second); st.refunds.Load() == 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the lost decision's slot was never released", name)
			}
		}
		free := false // a peek (cost 0) takes no slot, and says how many are free
		for deadline := time.Now().Add(3 * time.Second); !free && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			d, err := lim.Decide(ctx, limiter.Check{Rule: "inflight", Identity: "u"})
			free = err == nil && len(d.Results) == 1 && d.Results[0].Remaining == 1
		}
		if !free {
			t.Errorf("%s: the slot of a decision that ran after its release is still held (%d releases)", name, st.refunds.Load())
		}
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// The same on a real redis-server, its reply lost for real: the server
// is busy (DEBUG SLEEP) for longer than the store's timeout, so the
// decision times out and then runs once the server is back, taking the
// slot; its release comes after it and frees the slot, an hour before
// its TTL.
func TestLostReplyOnARealServerReleasesItsSlot(t *testing.T) {
	srv := redistest.Start(t, "--enable-debug-command", "yes")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	st := mustStore(redisstore.New(rdb, redisstore.WithTimeout(100*time.Millisecond)))
	lim := newLimiter(t, st, []limiter.Rule{{Name: "one", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Hour}}})
	if d, err := lim.Allow(ctx, "one", "another"); err != nil || !d.Allowed { // the functions loaded, a connection open
		t.Fatal(d, err)
	}
	slept := make(chan error, 1)
	go func() { slept <- srv.Client.Do(ctx, "debug", "sleep", "0.5").Err() }()
	busy(t, srv.Addr)
	if d, err := lim.Allow(ctx, "one", "u"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("during the pause: %+v, %v; want the store's timeout", d, err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		d, err := lim.Allow(ctx, "one", "u")
		if err == nil && d.Allowed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lost decision's slot is still held: %+v, %v", d, err)
		}
	}
	if d, err := lim.Allow(ctx, "one", "u"); err != nil || d.Allowed {
		t.Errorf("a second slot of one: %+v, %v", d, err)
	}
	if err := <-slept; err != nil {
		t.Error(err)
	}
}

// busy waits until the server at addr stops answering: a PING on a
// connection of its own times out.
func busy(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 20 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	for range 500 {
		if err := c.Ping(ctx).Err(); err != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the server never became busy")
}
