package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/client"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// server is a loopback server behind our middleware: GCRA, 5 per second,
// burst 5, for everyone; refused counts its 429s.
func server(t *testing.T) (url string, refused *atomic.Int64) {
	return limitedServer(t, algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 5}, nil, middleware.WithHeaders(headers.Both))
}

// limitedServer serves "ok" behind one rule of alg for everyone, on the
// memstore, and counts the requests it refuses.
func limitedServer(t *testing.T, alg algorithms.Algorithm, lopts []limiter.Option, opts ...middleware.Option) (url string, refused *atomic.Int64) {
	t.Helper()
	refused = &atomic.Int64{}
	opts = append(opts, middleware.WithHook(func(e guard.Event) {
		if !e.Decision.Allowed {
			refused.Add(1)
		}
	}))
	mw := mwtest.Limit(t, memstore.Must(), []middleware.Rule{{Rule: limiter.Rule{Name: "api", Algorithm: alg}, Identity: keyfunc.Constant("all")}}, lopts, opts...)
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })))
	t.Cleanup(srv.Close)
	return srv.URL, refused
}

func get(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// A client that obeys sends a steady run without a single 429, and a burst
// of concurrent requests is smoothed, not refused: every caller gets 200.
func TestObeysOurMiddleware(t *testing.T) {
	t.Run("steady", func(t *testing.T) {
		url, refused := server(t)
		c := &http.Client{Transport: &client.Transport{}}
		start := time.Now()
		const n = 15
		for i := range n {
			if got := get(t, c, url); got != http.StatusOK {
				t.Fatalf("request %d: %d", i, got)
			}
		}
		t.Logf("steady: %d requests sent, %d 429s seen by the server, %v", n, refused.Load(), time.Since(start).Round(time.Millisecond))
		if refused.Load() != 0 {
			t.Errorf("the server refused %d requests of a client that obeys", refused.Load())
		}
	})
	t.Run("burst", func(t *testing.T) {
		url, refused := server(t)
		c := &http.Client{Transport: &client.Transport{}}
		get(t, c, url) // learn the policy
		start := time.Now()
		const n = 20
		var ok atomic.Int64
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if get(t, c, url) == http.StatusOK {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		t.Logf("burst: %d concurrent requests sent, %d answered 200, %d 429s seen by the server, %v", n, ok.Load(), refused.Load(), time.Since(start).Round(time.Millisecond))
		if ok.Load() != n {
			t.Errorf("%d of %d callers got 200", ok.Load(), n)
		}
		if refused.Load() > 2 {
			t.Errorf("the server refused %d requests: the burst was not paced", refused.Load())
		}
	})
}

// A server that keeps refusing: the wait never runs past the request's
// deadline, bodies that cannot be replayed are not sent again, and ones that
// can are.
func TestRetriesAreBounded(t *testing.T) {
	var sends atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sends.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After", "0")
		if r.URL.Path == "/slow" {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	tr := &client.Transport{}
	send := func(req *http.Request) (int, int64) {
		sends.Store(0)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, sends.Load()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	if status, n := send(req); status != 429 || n != 1 || ctx.Err() != nil {
		t.Errorf("Retry-After beyond the deadline: %d after %d sends (context %v), want the 429 at once", status, n, ctx.Err())
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	if status, n := send(req); status != 429 || n != 3 {
		t.Errorf("always refused: %d after %d sends, want 3 (MaxAttempts)", status, n)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(bytes.NewReader([]byte("x"))))
	if status, n := send(req); status != 429 || n != 1 {
		t.Errorf("POST with a body that cannot be replayed: %d after %d sends, want 1", status, n)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte("x"))) // sets GetBody
	if status, n := send(req); status != 429 || n != 3 {
		t.Errorf("POST with a replayable body: %d after %d sends, want 3", status, n)
	}
}

func TestReadsEveryForm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		waits  bool
	}{
		{"IETF", http.Header{"Ratelimit": {`"a";r=0;t=1`}}, true},
		{"X-RateLimit delta", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1"}}, true},
		{"X-RateLimit epoch", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"9999999999"}}, true},
		{"quota left", http.Header{"Ratelimit": {`"a";r=3;t=1`}}, false},
	} {
		var sends atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			for k, v := range tc.header {
				w.Header()[k] = v
			}
		}))
		tr := &client.Transport{MaxWait: 300 * time.Millisecond}
		c := &http.Client{Transport: tr}
		get(t, c, srv.URL)
		// The wait (1 s or more) is beyond MaxWait: a held request fails at
		// once instead of sleeping.
		_, err := c.Get(srv.URL)
		if held := errors.Is(err, client.ErrWaitTooLong); held != tc.waits || (err != nil && !held) {
			t.Errorf("%s: second request: %v, want held back %v", tc.name, err, tc.waits)
		}
		srv.Close()
	}
}
