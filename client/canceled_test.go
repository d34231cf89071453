package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// A request canceled while it waits for its turn was not sent: it gives
// its turn back, and the next request takes it rather than one a gap
// later.
func TestCanceledRequestGivesItsTurnBack(t *testing.T) {
	clk := newFakeClock()
	var sends []time.Time
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sends = append(sends, clk.Now())
		h := http.Header{}
		h.Set("RateLimit-Policy", `"all";q=1;w=10`) // one request every 10 s
		h.Set("RateLimit", `"all";r=0;t=0`)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
	})
	tr := &client.Transport{Base: base}
	canceled := false
	client.SetClock(tr, clk.Now, func(ctx context.Context, d time.Duration) error {
		if canceled {
			return ctx.Err()
		}
		return clk.Sleep(ctx, d)
	})
	get := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		res, err := tr.RoundTrip(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	for range 2 {
		if err := get(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The third request's turn is 10 s after the second; its caller gives
	// up while it waits.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	canceled = true
	if err := get(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	canceled = false
	if err := get(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sends) != 3 {
		t.Fatalf("%d sends, want 3", len(sends))
	}
	if gap := sends[2].Sub(sends[1]); gap > 11*time.Second {
		t.Errorf("the request after the canceled one went %v after the one before, want the canceled one's turn (10s)", gap)
	}
}
