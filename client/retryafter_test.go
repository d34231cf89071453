package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// After a refusal, the retry goes when Retry-After says, not when a longer
// RateLimit "t" or X-RateLimit-Reset says a policy's quota is back (a
// concurrency limit's slot expiry, here a minute), nor at the
// Transport's own next turn (a tenth of the 10-a-minute policy, after a
// response that left no quota).
func TestRetryAfterGovernsTheRetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers func(now time.Time) []answer // the server's, in turn
		retry   time.Duration                // when the last request should be sent
	}{
		{"over X-RateLimit-Reset", func(now time.Time) []answer {
			return []answer{{429, http.Header{"Retry-After": {"1"}, "X-Ratelimit-Limit": {"1"}, "X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset": {strconv.FormatInt(now.Add(time.Minute).Unix(), 10)}}}, {200, nil}}
		}, time.Second},
		{`over RateLimit "t"`, func(time.Time) []answer {
			return []answer{{429, http.Header{"Retry-After": {"1"}, "Ratelimit": {`"in-flight";r=0;t=60`},
				"Ratelimit-Policy": {`"in-flight";q=1;qu="concurrent-requests"`}}}, {200, nil}}
		}, time.Second},
		{"over the Transport's turn", func(time.Time) []answer {
			policy := http.Header{"Ratelimit-Policy": {`"minute";q=10;w=60`}}
			return []answer{
				{200, merge(policy, http.Header{"Ratelimit": {`"minute";r=0;t=1`}})},
				{429, merge(policy, http.Header{"Retry-After": {"2"}, "Ratelimit": {`"minute";r=0;t=2`}})},
				{200, policy},
			}
		}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			start := clk.Now()
			answers := tc.answers(start)
			var mu sync.Mutex
			var arrivals []time.Duration
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				arrivals = append(arrivals, clk.Now().Sub(start))
				a := answers[min(len(arrivals), len(answers))-1]
				for k, v := range a.header {
					w.Header()[k] = v
				}
				w.WriteHeader(a.status)
			}))
			defer srv.Close()
			c := &http.Client{Transport: clk.transport()}
			var last int
			for range len(answers) - 1 { // the last request is the retry
				res, err := c.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				last = res.StatusCode
			}
			mu.Lock()
			defer mu.Unlock()
			if last != http.StatusOK || len(arrivals) != len(answers) {
				t.Fatalf("%d after %d sends (at %v), want the retry's 200", last, len(arrivals), arrivals)
			}
			if got := arrivals[len(arrivals)-1]; got < tc.retry || got > tc.retry+100*time.Millisecond {
				t.Errorf("retry sent at %v, want %v (sends at %v)", got, tc.retry, arrivals)
			}
		})
	}
}

// answer is a scripted response.
type answer struct {
	status int
	header http.Header
}

func merge(a, b http.Header) http.Header {
	h := a.Clone()
	for k, v := range b {
		h[k] = v
	}
	return h
}
