package limiter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// flaky fails the calls whose numbers are in fail.
type flaky struct {
	n    int
	fail map[int]bool
}

func (f *flaky) Decide(context.Context, time.Time, []StoreCheck) (Decision, error) {
	f.n++
	if f.fail[f.n] {
		return Decision{}, errors.New("i/o timeout")
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
