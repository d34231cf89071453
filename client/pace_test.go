package client_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// A client that obeys gets the rate the server advertises (q/w of
// RateLimit-Policy, 2 per second here): 20 sequential requests through our
// middleware reach at least 90% of it, and the server refuses none. The
// server's decisions and the Transport share a fake clock, which only the
// Transport's sleeps (up to 2 ms late) and the network (a millisecond each
// way) move, so the figures are the same on any machine. (SlidingWindow is
// left out: its estimate refuses evenly spaced requests beyond
// (Limit-1)/Window, under 90% of 2 per second.)
func TestPacesAtTheAdvertisedRate(t *testing.T) {
	for _, alg := range []algorithms.Algorithm{
		algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 2},
		algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 4},
		algorithms.TokenBucket{Capacity: 2, Rate: 2, Period: time.Second},
		algorithms.LeakyBucket{Capacity: 2, Rate: 2, Period: time.Second},
		algorithms.FixedWindow{Limit: 2, Window: time.Second},
		algorithms.SlidingLog{Limit: 2, Window: time.Second},
	} {
		t.Run(alg.String(), func(t *testing.T) {
			clk := newFakeClock()
			url, refused := limitedServer(t, alg, []limiter.Option{limiter.WithClock(clk.Now)}, middleware.WithHeaders(headers.IETF))
			c := &http.Client{Transport: clk.transport()}

			const n = 20
			start := clk.Now()
			var log strings.Builder
			for range n {
				res, err := c.Get(url)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				fmt.Fprintf(&log, " %.3fs %d %s;", clk.Now().Sub(start).Seconds(), res.StatusCode, res.Header.Get("RateLimit"))
			}
			elapsed := clk.Now().Sub(start)
			p := algorithms.PolicyOf(alg)
			advertised := float64(p.Quota) / p.Window.Seconds()
			rate := n / elapsed.Seconds()
			t.Logf("%d requests in %.2fs: %.2f/s, %.0f%% of the advertised %.0f/s; %d refused", n, elapsed.Seconds(), rate, 100*rate/advertised, advertised, refused.Load())
			if refused.Load() != 0 {
				t.Errorf("the server refused %d requests:%s", refused.Load(), log.String())
			}
			if rate < 0.9*advertised {
				t.Errorf("%.2f requests/s, under 90%% of the advertised %.0f/s:%s", rate, advertised, log.String())
			}
		})
	}
}
