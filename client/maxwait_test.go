package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// refusing is a server that refuses every request with a 429 that says
// retryAfter and a policy of 10 a minute, and a body naming the send;
// sends counts them.
func refusing(t *testing.T, retryAfter string) (url string, sends *atomic.Int64) {
	t.Helper()
	sends = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := sends.Add(1)
		w.Header().Set("Retry-After", retryAfter)
		w.Header().Set("RateLimit-Policy", `"minute";q=10;w=60`)
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, "slow down (send %d)", n)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, sends
}

// A refusal whose retry would have to wait past MaxWait or the context's
// deadline comes back as it is: the 429, its body readable, and no error.
func TestRefusalPastMaxWaitIsReturned(t *testing.T) {
	check := func(t *testing.T, res *http.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("error %v, want the 429", err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusTooManyRequests || err != nil || !strings.HasPrefix(string(body), "slow down") {
			t.Errorf("%d %q (%v), want the 429 and its body", res.StatusCode, body, err)
		}
	}
	t.Run("Retry-After past MaxWait", func(t *testing.T) {
		url, sends := refusing(t, "60")
		c := &http.Client{Transport: &client.Transport{MaxWait: time.Second}}
		res, err := c.Get(url)
		check(t, res, err)
		if sends.Load() != 1 {
			t.Errorf("%d sends, want 1", sends.Load())
		}
	})
	t.Run("Retry-After past the deadline", func(t *testing.T) {
		url, _ := refusing(t, "60")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := (&http.Client{Transport: &client.Transport{}}).Do(req)
		check(t, res, err)
	})
	t.Run("retry held past MaxWait", func(t *testing.T) {
		// The server asks for 2 s each time; MaxWait is 5 s. However the
		// Transport spaces the retries, the one past 5 s is not sent and
		// the last 429 is returned.
		url, sends := refusing(t, "2")
		clk := newFakeClock()
		tr := clk.transport()
		tr.MaxWait, tr.MaxAttempts = 5*time.Second, 10
		res, err := (&http.Client{Transport: tr}).Get(url)
		check(t, res, err)
		if n := sends.Load(); n < 2 || n > 3 {
			t.Errorf("%d sends in 5 s of 2 s waits, want 2 or 3", n)
		}
	})
}

// A request the host is known to refuse until past MaxWait is not sent: it
// fails at once with ErrWaitTooLong, saying which limit it would pass, and
// takes no place from the requests that follow it.
func TestHeldRequestIsNotSent(t *testing.T) {
	url, sends := refusing(t, "60")
	clk := newFakeClock()
	c := &http.Client{Transport: clk.transport()}
	if res, err := c.Get(url); err != nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("first request: %v %v", res, err)
	}
	for range 3 {
		_, err := c.Get(url)
		if !errors.Is(err, client.ErrWaitTooLong) || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "MaxWait") {
			t.Errorf("held past MaxWait: %v, want ErrWaitTooLong saying MaxWait", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if _, err := c.Do(req); !errors.Is(err, client.ErrWaitTooLong) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("held past the context's deadline: %v, want ErrWaitTooLong saying deadline", err)
	}
	if n := sends.Load(); n != 1 {
		t.Errorf("%d sends, want only the first", n)
	}
	// The held requests took no turn: once the host's minute has passed,
	// the next request goes at once.
	clk.Advance(time.Minute)
	before := clk.Now()
	if res, err := c.Get(url); err != nil || res.StatusCode != http.StatusTooManyRequests || sends.Load() != 2 {
		t.Errorf("after the host's wait: %v %v, %d sends, want the request sent", res, err, sends.Load())
	}
	if waited := clk.Now().Sub(before); waited > 10*time.Millisecond {
		t.Errorf("after the host's wait, the next request waited %v more", waited)
	}
}

// A request whose deadline has passed before it is sent, and that nothing
// holds, fails with context.DeadlineExceeded, as net/http's own transport
// fails it, unsent: not with ErrWaitTooLong, which says its host refuses
// it for a while.
func TestRequestPastItsDeadline(t *testing.T) {
	sent := false
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = true
		return nil, r.Context().Err()
	})}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/", nil)
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, client.ErrWaitTooLong) || sent {
		t.Fatalf("a request past its deadline: %v (sent %v), want context.DeadlineExceeded, unsent", err, sent)
	}
}

// roundTripFunc is a RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
