package limiter_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// failingRefunds fails every Refund with fail() while it returns an error,
// without passing it on; it counts the calls.
type failingRefunds struct {
	store.Store
	fail  atomic.Pointer[error]
	calls atomic.Int32
}

func (s *failingRefunds) Refund(ctx context.Context, now, at time.Time, r []store.Refund) error {
	s.calls.Add(1)
	if err := s.fail.Load(); err != nil {
		return *err
	}
	return s.Store.Refund(ctx, now, at, r)
}

func (s *failingRefunds) failWith(err error) {
	if err == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&err)
}

// refused is a failed dial, as the Redis store reports one.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

// inflight is a concurrency rule of one slot held for an hour unless
// released.
var inflight = []limiter.Rule{{Name: "inflight", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Hour}}}

// admittedWithin reports whether a request on lim is admitted within d,
// polling.
func admittedWithin(t *testing.T, lim *limiter.Limiter, d time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		dec, err := lim.Allow(ctx, "inflight", "u")
		if err == nil && dec.Allowed {
			return true
		}
	}
	return false
}

// holdAndFail takes the one slot on lim and settles it while its release
// fails: the slot is still held.
func holdAndFail(t *testing.T, lim *limiter.Limiter) {
	t.Helper()
	d, err := lim.Allow(ctx, "inflight", "u")
	if err != nil || !d.Allowed {
		t.Fatalf("first request: %+v, %v", d, err)
	}
	if _, err := lim.Settle(ctx, d, 0); !errors.Is(err, limiter.ErrBackend) {
		t.Fatalf("Settle with the release failing: %v, want an ErrBackend", err)
	}
	if d, err := lim.Allow(ctx, "inflight", "u"); err != nil || d.Allowed {
		t.Fatalf("slot released although its release failed: %+v, %v", d, err)
	}
}

// A slot release whose dial failed (nothing reached the store) is sent
// again in the background once the store is back: the next request is
// admitted long before the slot's hour-long TTL.
func TestSlotReleaseRetriedAfterFailedDial(t *testing.T) {
	for _, cause := range []error{refused, &fault.DialError{Err: refused}} {
		st := &failingRefunds{Store: memstore.Must()}
		lim := newLimiter(t, st, inflight)
		st.failWith(cause)
		holdAndFail(t, lim)
		time.Sleep(200 * time.Millisecond) // a few retries fail meanwhile
		if n := st.calls.Load(); n < 2 {
			t.Errorf("%v: %d Refund calls while the store was down, want retries", cause, n)
		}
		st.failWith(nil)
		if !admittedWithin(t, lim, 2*time.Second) {
			t.Errorf("%v: slot still held 2 s after the store came back: its release was not retried", cause)
		}
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// mayHaveRun are failures after which a release may have run: a timeout,
// a connection lost in use, a timeout whose cause is a failed dial (the
// call may have been written on a connection already open), and errors
// of several round trips.
var mayHaveRun = []error{
	context.DeadlineExceeded,
	io.ErrUnexpectedEOF,
	fault.WithDialCause(&fault.DialError{Err: refused}, context.DeadlineExceeded),
	errors.Join(refused, context.DeadlineExceeded), // two round trips, one of which may have run
	&fault.Refunds{Errs: []error{context.DeadlineExceeded}},
}

// noSlotIDs decides without slot ids, as a store that returns none: its
// releases go by the decision's instant.
type noSlotIDs struct{ store.Store }

func (s noSlotIDs) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	for i := range checks {
		checks[i].Slot = 0
	}
	return s.Store.Decide(ctx, now, checks, results)
}

// A release without a slot id that may have run is never sent again: it
// gives back any slot of its instant, and sent twice it could give back
// another request's.
func TestSlotReleaseMaybeRunNotRetried(t *testing.T) {
	for _, cause := range mayHaveRun {
		st := &failingRefunds{Store: noSlotIDs{memstore.Must()}}
		lim := newLimiter(t, st, inflight)
		st.failWith(cause)
		holdAndFail(t, lim)
		st.failWith(nil)
		time.Sleep(300 * time.Millisecond)
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
		if n := st.calls.Load(); n != 1 {
			t.Errorf("%v: %d Refund calls, want 1: a release that may have run was sent again", cause, n)
		}
		if d, _ := lim.Allow(ctx, "inflight", "u"); d.Allowed {
			t.Errorf("%v: slot released", cause)
		}
	}
}

// A release with a slot id (the limiter gives every slot one) that may
// have run is sent again until it succeeds: sent twice, it removes its own
// slot once.
func TestSlotReleaseWithIDMaybeRunRetried(t *testing.T) {
	for _, cause := range mayHaveRun {
		st := &failingRefunds{Store: memstore.Must()}
		lim := newLimiter(t, st, inflight)
		st.failWith(cause)
		holdAndFail(t, lim)
		time.Sleep(100 * time.Millisecond)
		st.failWith(nil)
		if !admittedWithin(t, lim, 2*time.Second) {
			t.Errorf("%v: slot still held 2 s after the store came back: its release was not retried", cause)
		}
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
		if n := st.calls.Load(); n < 2 {
			t.Errorf("%v: %d Refund calls, want the release sent again", cause, n)
		}
	}
}

// Close sends a pending release one last time, and stops retrying.
func TestCloseSendsPendingRelease(t *testing.T) {
	st := &failingRefunds{Store: memstore.Must()}
	lim := newLimiter(t, st, inflight)
	st.failWith(refused)
	holdAndFail(t, lim)
	// Once the first retry has failed, the next is 25 ms away at least.
	for deadline := time.Now().Add(time.Second); st.calls.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("release not retried")
		}
	}
	st.failWith(nil)
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := lim.Allow(ctx, "inflight", "u"); err != nil || !d.Allowed {
		t.Errorf("slot still held after Close: %+v, %v", d, err)
	}
	n := st.calls.Load()
	time.Sleep(100 * time.Millisecond)
	if m := st.calls.Load(); m != n {
		t.Errorf("%d more Refund calls after Close", m-n)
	}
}

// Of a stack's refunds, only the slot releases are sent again; a
// window's give-back that failed is not.
func TestOnlySlotReleasesRetried(t *testing.T) {
	st := &failingRefunds{Store: memstore.Must()}
	rules := []limiter.Rule{inflight[0], {Name: "window", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}}
	lim := newLimiter(t, st, rules)
	defer lim.Close()
	d, err := lim.Decide(ctx, limiter.Check{Rule: "inflight", Identity: "u", Cost: 1}, limiter.Check{Rule: "window", Identity: "u", Cost: 1})
	if err != nil || !d.Allowed {
		t.Fatalf("%+v, %v", d, err)
	}
	st.failWith(refused)
	if _, err := lim.Settle(ctx, d, 0, 0); !errors.Is(err, limiter.ErrBackend) {
		t.Fatalf("Settle: %v", err)
	}
	st.failWith(nil)
	if !admittedWithin(t, lim, 2*time.Second) {
		t.Fatal("slot not released")
	}
	if d, _ := lim.Allow(ctx, "window", "u"); d.Allowed {
		t.Error("the window's give-back was retried")
	}
}

// On a real redis-server behind a proxy that refuses connections for a
// while: the release fails at the dial, and is sent again once the proxy
// is back.
func TestSlotReleaseRetriedOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	p := startProxy(t, srv.Addr)
	client := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1})
	defer client.Close()
	lim := newLimiter(t, mustStore(redisstore.New(client, redisstore.WithTimeout(500*time.Millisecond))), inflight)
	defer lim.Close()
	d, err := lim.Allow(ctx, "inflight", "u")
	if err != nil || !d.Allowed {
		t.Fatalf("first request: %+v, %v", d, err)
	}
	p.down(t)
	_, err = lim.Settle(ctx, d, 0)
	if !errors.Is(err, limiter.ErrBackend) || limiter.CauseOf(err) != limiter.CauseRefused {
		t.Fatalf("Settle while Redis is unreachable: %v (cause %q), want a refused dial", err, limiter.CauseOf(err))
	}
	time.Sleep(200 * time.Millisecond)
	p.up(t)
	if !admittedWithin(t, lim, 3*time.Second) {
		t.Fatal("slot still held 3 s after Redis came back: its release was not retried")
	}
}

// proxy forwards TCP connections to a server until down, which closes its
// listener and connections; up listens again on the same address.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
	wg           sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.down(t) })
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.ln = ln
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(s, c); s.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, s); c.Close() })
		}
	})
}

func (p *proxy) down(t *testing.T) {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *proxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serve(ln)
}

// A flood of failing releases logs one line per interval, with counts,
// not a line per failure.
func TestSlotReleaseFailuresLoggedBounded(t *testing.T) {
	rec := &logtest.Recorder{}
	old := slog.Default()
	slog.SetDefault(slog.New(rec))
	defer slog.SetDefault(old)
	st := &failingRefunds{Store: memstore.Must()}
	lim := newLimiter(t, st, []limiter.Rule{{Name: "inflight", Algorithm: algorithms.Concurrency{Limit: 500, TTL: time.Hour}}})
	st.failWith(refused)
	for i := range 500 {
		d, err := lim.Allow(ctx, "inflight", "u")
		if err != nil || !d.Allowed {
			t.Fatalf("request %d: %+v, %v", i, d, err)
		}
		if _, err := lim.Settle(ctx, d, 0); err == nil {
			t.Fatal("release succeeded")
		}
	}
	time.Sleep(500 * time.Millisecond) // each release fails again several times
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
	calls, lines := st.calls.Load(), rec.Records()
	if calls < 1500 {
		t.Errorf("%d Refund calls, want each of 500 releases retried", calls)
	}
	// The first failed retry, and Close's line on what it gave up.
	if len(lines) != 2 {
		t.Fatalf("%d log lines for %d failures, want 2", len(lines), calls-500)
	}
	counts := map[string]int64{}
	for _, r := range lines {
		r.Attrs(func(a slog.Attr) bool {
			if a.Value.Kind() == slog.KindInt64 {
				counts[a.Key] += a.Value.Int64()
			}
			return true
		})
	}
	if counts["failures"] != int64(calls)-500 || counts["dropped"] != 500 {
		t.Errorf("lines count %v, want %d failures and 500 dropped", counts, calls-500)
	}
}
