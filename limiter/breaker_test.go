package limiter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
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
