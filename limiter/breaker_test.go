package limiter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
)

// flaky fails the calls whose numbers are in fail, with err (a refused
// connection when nil).
type flaky struct {
	n    int
	fail map[int]bool
	err  error
}

func (f *flaky) Decide(context.Context, time.Time, []StoreCheck) (Decision, error) {
	f.n++
	if f.fail[f.n] {
		if f.err != nil {
			return Decision{}, f.err
		}
		return Decision{}, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	return Decision{Allowed: true}, nil
}

// One or two failures among successes never turn requests away; three in
// a row do, until the retry interval has passed.
func TestBreakerTripsOnConsecutiveFailures(t *testing.T) {
	store := &flaky{fail: map[int]bool{2: true, 4: true, 5: true, 7: true, 8: true, 9: true}}
	b := &breaker{store: store, retry: time.Hour}
	var got []string
	for range 11 {
		_, err := b.decide(context.Background(), time.Time{}, nil)
		switch {
		case errors.Is(err, ErrUnavailable):
			got = append(got, "skipped")
		case err != nil:
			got = append(got, "failed")
		default:
			got = append(got, "ok")
		}
	}
	want := "ok failed ok failed failed ok failed failed failed skipped skipped"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("got %s\nwant %s", g, want)
	}
	if store.n != 9 {
		t.Errorf("%d calls reached the store, want 9", store.n)
	}
}

// Timeouts that all happen at once (a lost pipeline of coalesced
// decisions) do not trip the breaker until they have gone on for its span.
func TestBreakerWantsTimeoutsOverTime(t *testing.T) {
	fail := map[int]bool{}
	for i := range 200 {
		fail[i+1] = true
	}
	b := &breaker{store: &flaky{fail: fail, err: context.DeadlineExceeded}, retry: time.Hour, span: 50 * time.Millisecond}
	for i := range 100 {
		if _, err := b.decide(context.Background(), time.Time{}, nil); errors.Is(err, ErrUnavailable) {
			t.Fatalf("failure %d, all within microseconds, tripped the breaker", i+1)
		}
	}
	time.Sleep(60 * time.Millisecond)
	_, _ = b.decide(context.Background(), time.Time{}, nil) // the span has passed: this one trips it
	if _, err := b.decide(context.Background(), time.Time{}, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("failures over more than the span did not trip it: %v", err)
	}
}

var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// A dial that fails ends the calls in flight at once with its error; a
// timeout while no dial has succeeded since carries it as its cause (and
// is still a timeout); a dial that gave up with its own context, or one
// that succeeded, is not held against Redis.
func TestDialWatch(t *testing.T) {
	w := &dialWatch{}
	w.newEpoch()
	dial := func(ctx context.Context, err error) {
		_, _ = w.DialHook(func(context.Context, string, string) (net.Conn, error) { return nil, err })(ctx, "tcp", "127.0.0.1:1")
	}
	inFlight := w.bind(context.Background(), time.Now().Add(time.Hour))
	defer inFlight.release()
	dial(context.Background(), refused)
	<-inFlight.ctx.Done()
	if err := inFlight.ended(context.Canceled); !errors.Is(err, syscall.ECONNREFUSED) || err.Error() != refused.Error() {
		t.Errorf("a call ended by the failed dial: %v", err)
	}

	later := w.bind(context.Background(), time.Now().Add(time.Hour))
	defer later.release()
	if later.ctx.Err() != nil {
		t.Fatal("a call made after the failed dial was ended by it")
	}
	err := w.cause(context.DeadlineExceeded)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.ECONNREFUSED) || !strings.HasPrefix(err.Error(), refused.Error()) {
		t.Errorf("a timeout after the failed dial: %v", err)
	}
	if err := w.cause(io.EOF); err != io.EOF {
		t.Errorf("EOF became %v", err)
	}

	gaveUp, cancel := context.WithCancel(context.Background())
	cancel()
	dial(gaveUp, &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled})
	if later.ctx.Err() != nil {
		t.Error("a dial that gave up with its context ended the calls in flight")
	}
	dial(context.Background(), nil)
	if err := w.cause(context.DeadlineExceeded); err != context.DeadlineExceeded {
		t.Errorf("a timeout after a successful dial: %v", err)
	}
}

// captured records what the breaker logs.
type captured struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captured) Enabled(context.Context, slog.Level) bool { return true }
func (h *captured) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r)
	h.mu.Unlock()
	return nil
}
func (h *captured) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captured) WithGroup(string) slog.Handler      { return h }

// count is how many records say msg, and their "error" attributes.
func (h *captured) count(msg string) (n int, errs []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Message == msg {
			n++
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "error" {
					errs = append(errs, a.Value.String())
				}
				return true
			})
		}
	}
	return n, errs
}

func captureLog(t *testing.T) *captured {
	h := &captured{}
	prev := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return h
}

// Redis refusing connections: go-redis redials until the call's deadline,
// but the decisions fail with the refusal (at once), which the breaker
// logs as the cause when it marks Redis down; no error carries the
// identity.
func TestRefusedConnectionIsTheCause(t *testing.T) {
	for _, coalesce := range []bool{true, false} {
		logged := captureLog(t)
		s := redistest.Start(t)
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr}) // go-redis's defaults
		defer rdb.Close()
		lim, err := New(rdb, []Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}},
			WithDenyCache(0, 0), WithCoalescing(coalesce))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lim.Allow(context.Background(), "r", "alice@example.com"); err != nil {
			t.Fatal(err)
		}
		s.Stop()
		for i := range tripAfter {
			_, err := lim.Allow(context.Background(), "r", "alice@example.com")
			if !errors.Is(err, ErrBackend) || !errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "alice") {
				t.Errorf("coalescing %v, decision %d with Redis refusing connections: %v, want ErrBackend with the refusal", coalesce, i, err)
			}
		}
		if n, errs := logged.count("rate limit backend down"); n != 1 || !strings.Contains(errs[0], "connection refused") {
			t.Errorf("coalescing %v: logged %d down transitions, errors %q; want one, caused by the refused connection", coalesce, n, errs)
		}
	}
}
