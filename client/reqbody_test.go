package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// closeCounter is a request body that counts its closes.
type closeCounter struct {
	io.Reader
	closed atomic.Int64
}

func (b *closeCounter) Close() error { b.closed.Add(1); return nil }

// A RoundTripper must close the request's body, even when it returns an
// error (http.Client leaves it to the RoundTripper): a request the
// Transport does not send, held by its host past MaxWait or canceled
// while it waits, has its body closed all the same.
func TestUnsentRequestBodyIsClosed(t *testing.T) {
	url, _ := refusing(t, "60")
	clk := newFakeClock()
	tr := clk.transport()
	c := &http.Client{Transport: tr}
	if res, err := c.Get(url); err != nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("first request: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	t.Run("held past MaxWait", func(t *testing.T) {
		body := &closeCounter{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequest(http.MethodPost, url, body)
		_, err := c.Do(req)
		if !errors.Is(err, client.ErrWaitTooLong) {
			t.Fatalf("%v, want ErrWaitTooLong", err)
		}
		if n := body.closed.Load(); n == 0 {
			t.Errorf("the body of a request not sent was not closed")
		}
	})
	t.Run("canceled while waiting", func(t *testing.T) {
		// The request's wait is canceled as it starts.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		canceling := &client.Transport{Base: tr.Base, MaxWait: 2 * time.Minute, MaxAttempts: 1}
		client.SetClock(canceling, clk.Now, func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		})
		// This Transport learns the host's minute too.
		if res, err := (&http.Client{Transport: canceling}).Get(url); err != nil {
			t.Fatal(err)
		} else {
			res.Body.Close()
		}
		body := &closeCounter{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
		if _, err := canceling.RoundTrip(req); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v, want context.Canceled", err)
		}
		if n := body.closed.Load(); n == 0 {
			t.Errorf("the body of a request canceled before it was sent was not closed")
		}
	})
}
