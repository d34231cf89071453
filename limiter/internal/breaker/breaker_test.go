package breaker

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// flaky fails the calls whose numbers are in fail, with err (a refused
// connection when nil).
type flaky struct {
	n    int
	fail map[int]bool
	err  error
}

func (f *flaky) Decide(context.Context, time.Time, []store.Check, []store.Result) (store.Verdict, error) {
	f.n++
	if f.fail[f.n] {
		if f.err != nil {
			return store.Verdict{}, f.err
		}
		return store.Verdict{}, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	return store.Verdict{Allowed: true}, nil
}

// One or two failures among successes never turn requests away; three in
// a row do, until the retry interval has passed.
func TestBreakerTripsOnConsecutiveFailures(t *testing.T) {
	store := &flaky{fail: map[int]bool{2: true, 4: true, 5: true, 7: true, 8: true, 9: true}}
	b := &Breaker{Store: store, Retry: time.Hour}
	want := "ok failed ok failed failed ok failed failed failed skipped skipped"
	if g := outcomes(b, 11); g != want {
		t.Errorf("got %s\nwant %s", g, want)
	}
	if store.n != 9 {
		t.Errorf("%d calls reached the store, want 9", store.n)
	}
}

// Timeouts that all happen at once (a lost pipeline of coalesced
// decisions) do not trip the breaker until they have gone on for its timeout.
func TestBreakerWantsTimeoutsOverTime(t *testing.T) {
	fail := map[int]bool{}
	for i := range 200 {
		fail[i+1] = true
	}
	b := &Breaker{Store: &flaky{fail: fail, err: context.DeadlineExceeded}, Retry: time.Hour, Timeout: 50 * time.Millisecond}
	for i := range 100 {
		if _, _, err := b.Decide(context.Background(), time.Time{}, nil, nil); errors.Is(err, ErrUnavailable) {
			t.Fatalf("failure %d, all within microseconds, tripped the breaker", i+1)
		}
	}
	time.Sleep(60 * time.Millisecond)
	_, _, _ = b.Decide(context.Background(), time.Time{}, nil, nil) // the timeout has passed: this one trips it
	if _, _, err := b.Decide(context.Background(), time.Time{}, nil, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("failures over more than the timeout did not trip it: %v", err)
	}
}

// scripted answers each call with the error its number maps to, nil
// (a success) for the others, and counts the calls.
type scripted struct {
	n    int
	errs map[int]error
}

func (s *scripted) Decide(context.Context, time.Time, []store.Check, []store.Result) (store.Verdict, error) {
	s.n++
	if err := s.errs[s.n]; err != nil {
		return store.Verdict{}, err
	}
	return store.Verdict{Allowed: true}, nil
}

// outcomes runs n decisions and says what each got.
func outcomes(b *Breaker, n int) string {
	var got []string
	for range n {
		_, _, err := b.Decide(context.Background(), time.Time{}, nil, nil)
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
// redials. They are evidence only once they have gone on for the timeout
// (here an hour, so never), like timeouts.
func TestBreakerLostConnectionsAreNotAnOutage(t *testing.T) {
	errs := map[int]error{}
	for i := range 60 {
		errs[i+1] = []error{io.EOF, reset, io.ErrUnexpectedEOF, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, net.ErrClosed}[i%5]
	}
	b := &Breaker{Store: &scripted{errs: errs}, Retry: time.Hour, Timeout: time.Hour}
	if got := outcomes(b, 61); strings.Contains(got, "skipped") {
		t.Errorf("60 lost connections in a row marked Redis down: %s", got)
	}
}

// A failed dial is evidence at once, even with a timeout of an hour: a lost
// connection and then two failed dials (or two timeouts that waited for a
// connection whose dial failed, see transport.DialWatch.Cause) mark Redis down.
func TestBreakerTripsOnFailedDials(t *testing.T) {
	waited := fault.WithDialCause(&fault.DialError{Err: refused}, context.DeadlineExceeded)
	for _, err := range []error{refused, waited} {
		b := &Breaker{Store: &scripted{errs: map[int]error{1: io.EOF, 2: err, 3: err}}, Retry: time.Hour, Timeout: time.Hour}
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
	one, two := &fault.RoundTrip{}, &fault.RoundTrip{}
	errs := map[int]error{}
	for i := range 20 {
		errs[i+1] = fault.Shared(loading, one)
	}
	for i := range 20 {
		errs[21+i] = fault.Shared(loading, two)
	}
	errs[41] = loading // a third round trip
	b := &Breaker{Store: &scripted{errs: errs}, Retry: time.Hour, Timeout: time.Hour}
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

func (s *blocking) Decide(context.Context, time.Time, []store.Check, []store.Result) (store.Verdict, error) {
	if s.n.Add(1) == 1 {
		close(s.started)
		<-s.release
	}
	return store.Verdict{}, s.err
}

// A call sent before Redis was marked down that fails afterwards does not
// put the retry off: only a failed probe does.
func TestBreakerLateFailureKeepsTheRetry(t *testing.T) {
	s := &blocking{err: refused, started: make(chan struct{}), release: make(chan struct{})}
	b := &Breaker{Store: s, Retry: time.Hour, Timeout: time.Hour}
	done := make(chan error)
	go func() {
		_, _, err := b.Decide(context.Background(), time.Time{}, nil, nil)
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
		b := &Breaker{Store: &scripted{errs: errs}, Retry: time.Hour}
		for range 10 {
			if _, _, err := b.Decide(ctx, time.Time{}, nil, nil); !errors.Is(err, ctx.Err()) {
				t.Fatalf("got %v, want %v", err, ctx.Err())
			}
		}
		if n := b.failures.Load(); n != 0 || b.downUntil.Load() != 0 {
			t.Errorf("%v: %d failures counted, down until %d", ctx.Err(), n, b.downUntil.Load())
		}
		until := time.Now().UnixNano()
		b.downUntil.Store(until) // down, the retry due
		b.Store = &scripted{errs: map[int]error{1: ctx.Err()}}
		_, _, _ = b.Decide(ctx, time.Time{}, nil, nil)
		if b.downUntil.Load() != until || b.probing.Load() {
			t.Errorf("%v: a probe given up moved the retry (%d, was %d) or kept the probe slot", ctx.Err(), b.downUntil.Load(), until)
		}
	}
}

// A decision that read the breaker's state just before a probe failed
// does not probe in its turn: the failed probe put the retry off, and one
// probe at a time goes to the store. The decision is held between its
// reading of the state and its claim of the probe (its reading of the
// clock) while the probe runs and fails.
func TestBreakerNoProbeOnAStaleRead(t *testing.T) {
	s := &scripted{errs: map[int]error{1: refused, 2: refused}}
	b := &Breaker{Store: s, Retry: time.Hour, Timeout: time.Hour}
	b.downUntil.Store(1) // down, the retry due
	read, resume := make(chan struct{}), make(chan struct{})
	var reads atomic.Int32
	b.clock = func() time.Time {
		if reads.Add(1) == 1 { // the first decision, which has read the state
			close(read)
			<-resume
		}
		return time.Now()
	}
	done := make(chan error)
	go func() {
		_, _, err := b.Decide(context.Background(), time.Time{}, nil, nil)
		done <- err
	}()
	<-read
	if _, _, err := b.Decide(context.Background(), time.Time{}, nil, nil); !errors.Is(err, refused) {
		t.Fatalf("the probe: %v, want its failure", err)
	}
	close(resume)
	if err := <-done; !errors.Is(err, ErrUnavailable) {
		t.Errorf("the decision that read the state before the probe failed: %v, want it skipped", err)
	}
	if s.n != 1 {
		t.Errorf("%d calls reached the store, want the one probe", s.n)
	}
}
