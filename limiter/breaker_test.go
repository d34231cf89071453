package limiter

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/logtest"
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
	want := "ok failed ok failed failed ok failed failed failed skipped skipped"
	if g := outcomes(b, 11); g != want {
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

// scripted answers each call with the error its number maps to, nil
// (a success) for the others, and counts the calls.
type scripted struct {
	n    int
	errs map[int]error
}

func (s *scripted) Decide(context.Context, time.Time, []StoreCheck) (Decision, error) {
	s.n++
	if err := s.errs[s.n]; err != nil {
		return Decision{}, err
	}
	return Decision{Allowed: true}, nil
}

// outcomes runs n decisions and says what each got.
func outcomes(b *breaker, n int) string {
	var got []string
	for range n {
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
	return strings.Join(got, " ")
}

var (
	refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset   = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
)

// Connections lost in use (CLIENT KILL: EOF, a reset, a broken pipe), any
// number of them at one instant, do not mark Redis down: the next call
// redials. They are evidence only once they have gone on for the span
// (here an hour, so never), like timeouts.
func TestBreakerLostConnectionsAreNotAnOutage(t *testing.T) {
	errs := map[int]error{}
	for i := range 60 {
		errs[i+1] = []error{io.EOF, reset, io.ErrUnexpectedEOF, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, net.ErrClosed}[i%5]
	}
	b := &breaker{store: &scripted{errs: errs}, retry: time.Hour, span: time.Hour}
	if got := outcomes(b, 61); strings.Contains(got, "skipped") {
		t.Errorf("60 lost connections in a row marked Redis down: %s", got)
	}
}

// A failed dial is evidence at once, even with a span of an hour: a lost
// connection and then two failed dials (or two timeouts that waited for a
// connection whose dial failed, see dialWatch.cause) mark Redis down.
func TestBreakerTripsOnFailedDials(t *testing.T) {
	waited := withDialCause(&dialError{refused}, context.DeadlineExceeded)
	for _, err := range []error{refused, waited} {
		b := &breaker{store: &scripted{errs: map[int]error{1: io.EOF, 2: err, 3: err}}, retry: time.Hour, span: time.Hour}
		if got, want := outcomes(b, 5), "failed failed failed skipped skipped"; got != want {
			t.Errorf("%v: got %s\nwant %s", err, got, want)
		}
	}
}

// The decisions of one round trip (a coalesced pipeline) that failed
// together are one failure, whatever the error; a success resets the
// count.
func TestBreakerCountsARoundTripOnce(t *testing.T) {
	loading := errors.New("LOADING Redis is loading the dataset in memory")
	one, two := &roundTrip{}, &roundTrip{}
	errs := map[int]error{}
	for i := range 20 {
		errs[i+1] = &sharedFailure{loading, one}
	}
	for i := range 20 {
		errs[21+i] = &sharedFailure{loading, two}
	}
	errs[41] = loading // a third round trip
	b := &breaker{store: &scripted{errs: errs}, retry: time.Hour, span: time.Hour}
	got := outcomes(b, 42)
	if want := strings.Repeat("failed ", 41) + "skipped"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// blocking fails its first call with err once released, and every other
// call with err at once.
type blocking struct {
	n       atomic.Int32
	err     error
	started chan struct{}
	release chan struct{}
}

func (s *blocking) Decide(context.Context, time.Time, []StoreCheck) (Decision, error) {
	if s.n.Add(1) == 1 {
		close(s.started)
		<-s.release
	}
	return Decision{}, s.err
}

// A call sent before Redis was marked down that fails afterwards does not
// put the retry off: only a failed probe does.
func TestBreakerLateFailureKeepsTheRetry(t *testing.T) {
	s := &blocking{err: refused, started: make(chan struct{}), release: make(chan struct{})}
	b := &breaker{store: s, retry: time.Hour, span: time.Hour}
	done := make(chan error)
	go func() {
		_, err := b.decide(context.Background(), time.Time{}, nil)
		done <- err
	}()
	<-s.started
	if got := outcomes(b, 4); got != "failed failed failed skipped" {
		t.Fatalf("got %s, want three failures, then skipped", got)
	}
	until := b.downUntil.Load()
	close(s.release)
	if err := <-done; !errors.Is(err, refused) {
		t.Fatalf("the late call: %v", err)
	}
	if b.downUntil.Load() != until {
		t.Errorf("a late failure moved the retry from %d to %d", until, b.downUntil.Load())
	}

	b.downUntil.Store(time.Now().UnixNano()) // the retry is due: the next call probes, and fails
	outcomes(b, 1)
	if got := b.downUntil.Load(); got <= until {
		t.Errorf("a failed probe left the retry at %d (was %d)", got, until)
	}
}

// A decision its caller gave up on (the request's client hung up, its
// context's deadline passed) is never counted as a Redis failure, nor is
// a probe whose caller gave up.
func TestBreakerIgnoresCallersGivingUp(t *testing.T) {
	for _, cause := range []func(context.Context) (context.Context, context.CancelFunc){
		context.WithCancel,
		func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithDeadline(ctx, time.Unix(1, 0))
		},
	} {
		ctx, cancel := cause(context.Background())
		cancel()
		errs := map[int]error{}
		for i := range 10 {
			errs[i+1] = ctx.Err()
		}
		b := &breaker{store: &scripted{errs: errs}, retry: time.Hour}
		for range 10 {
			if _, err := b.decide(ctx, time.Time{}, nil); !errors.Is(err, ctx.Err()) {
				t.Fatalf("got %v, want %v", err, ctx.Err())
			}
		}
		if n := b.failures.Load(); n != 0 || b.downUntil.Load() != 0 {
			t.Errorf("%v: %d failures counted, down until %d", ctx.Err(), n, b.downUntil.Load())
		}
		until := time.Now().UnixNano()
		b.downUntil.Store(until) // down, the retry due
		b.store = &scripted{errs: map[int]error{1: ctx.Err()}}
		_, _ = b.decide(ctx, time.Time{}, nil)
		if b.downUntil.Load() != until || b.probing.Load() {
			t.Errorf("%v: a probe given up moved the retry (%d, was %d) or kept the probe slot", ctx.Err(), b.downUntil.Load(), until)
		}
	}
}

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

// logCount is how many of rec's records say msg, and their "error"
// attributes.
func logCount(rec *logtest.Recorder, msg string) (n int, errs []string) {
	for _, r := range rec.Records() {
		if r.Message == msg {
			n++
			if e, ok := logtest.Attrs(r)["error"]; ok {
				errs = append(errs, e.String())
			}
		}
	}
	return n, errs
}

// Redis refusing connections: go-redis redials until the call's deadline,
// but the decisions fail with the refusal (at once), which the breaker
// logs as the cause when it marks Redis down; no error carries the
// identity.
func TestRefusedConnectionIsTheCause(t *testing.T) {
	for _, coalesce := range []bool{true, false} {
		logged := logtest.Capture(t)
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
		if n, errs := logCount(logged, "rate limit backend down"); n != 1 || !strings.Contains(errs[0], "connection refused") {
			t.Errorf("coalescing %v: logged %d down transitions, errors %q; want one, caused by the refused connection", coalesce, n, errs)
		}
	}
}

// CLIENT KILL of a healthy Redis, 5 times 250 ms apart, under 64
// goroutines deciding for one client (deny cache off): each kill fails the
// decisions in flight, the next ones redial and succeed, and Redis is
// never marked down; the limit holds.
func TestClientKillKeepsRedisUp(t *testing.T) {
	logged := logtest.Capture(t)
	s := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	lim, err := New(rdb, []Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}}, WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var admitted, denied, failed, unavailable atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for n := 0; n < 100_000 && !stop.Load(); n++ {
				d, err := lim.Allow(context.Background(), "r", "one")
				switch {
				case errors.Is(err, ErrUnavailable):
					unavailable.Add(1)
				case err != nil:
					failed.Add(1)
				case d.Allowed:
					admitted.Add(1)
				default:
					denied.Add(1)
				}
			}
		})
	}
	kills := 5
	for range kills {
		time.Sleep(250 * time.Millisecond)
		if err := s.Client.Do(context.Background(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
			t.Error(err)
		}
	}
	time.Sleep(250 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	down, causes := logCount(logged, "rate limit backend down")
	up, _ := logCount(logged, "rate limit backend up")
	t.Logf("%d CLIENT KILLs: admitted %d (limit 100), denied %d, failed %d, turned away as down %d; marked down %d times, up %d",
		kills, admitted.Load(), denied.Load(), failed.Load(), unavailable.Load(), down, up)
	if failed.Load() == 0 {
		t.Fatal("no decision was in flight at a kill: the test proves nothing")
	}
	if down != 0 || unavailable.Load() != 0 {
		t.Errorf("Redis, up all along, was marked down %d times (causes %q), turning %d decisions away", down, causes, unavailable.Load())
	}
	if admitted.Load() > 100 {
		t.Errorf("admitted %d, limit 100", admitted.Load())
	}
}
