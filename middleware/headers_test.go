package middleware_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// The headers of the 10th (allowed, last unit) and 11th (denied) request
// of a burst, per algorithm, both families. "t" is the time until more
// quota is available (draft-ietf-httpapi-ratelimit-headers-10): one unit's
// refill (1 s) for the buckets and GCRA, not their full reset (10 s); on a
// denial it is the wait, as Retry-After says.
func TestHeadersPerAlgorithm(t *testing.T) {
	epoch := mwtest.Epoch.Unix()
	reset := func(d int64) string { return strconv.FormatInt(epoch+d, 10) }
	type response struct{ remaining, reset, rateLimit, retryAfter string }
	for _, tc := range []struct {
		alg              algorithms.Algorithm
		policy           string
		allowed, refused response
	}{
		{algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 10}, `"r";q=10;w=10`,
			response{"0", reset(10), `"r";r=0;t=1`, ""}, response{"0", reset(10), `"r";r=0;t=1`, "1"}},
		{algorithms.TokenBucket{Capacity: 10, Rate: 1, Period: time.Second}, `"r";q=10;w=10`,
			response{"0", reset(10), `"r";r=0;t=1`, ""}, response{"0", reset(10), `"r";r=0;t=1`, "1"}},
		{algorithms.LeakyBucket{Capacity: 10, Rate: 2, Period: time.Second}, `"r";q=10;w=5`,
			response{"0", reset(5), `"r";r=0;t=1`, ""}, response{"0", reset(5), `"r";r=0;t=1`, "1"}},
		{algorithms.FixedWindow{Limit: 10, Window: time.Minute}, `"r";q=10;w=60`,
			response{"0", reset(60), `"r";r=0;t=60`, ""}, response{"0", reset(60), `"r";r=0;t=60`, "60"}},
		{algorithms.SlidingLog{Limit: 10, Window: time.Minute}, `"r";q=10;w=60`,
			response{"0", reset(60), `"r";r=0;t=60`, ""}, response{"0", reset(60), `"r";r=0;t=60`, "60"}},
		// The count fades through the next window: a unit is back 1 µs
		// into it (t rounds up to 61), all of it after 114 s.
		{algorithms.SlidingWindow{Limit: 10, Window: time.Minute}, `"r";q=10;w=60`,
			response{"0", reset(115), `"r";r=0;t=61`, ""}, response{"0", reset(115), `"r";r=0;t=61`, "61"}},
	} {
		for _, backend := range []string{"miniredis", "memstore"} {
			rules := []middleware.Rule{{Rule: limiter.Rule{Name: "r", Algorithm: tc.alg}, Identity: keyfunc.IP()}}
			var store any = memstore.Must()
			if backend == "miniredis" {
				_, store = redistest.Mini(t)
			}
			mw := mwtest.New(t, store, rules, clock(), middleware.WithHeaders(headers.Both))
			h := mw(ok)
			for i := 1; i <= 11; i++ {
				res := do(h, "GET", "/", "203.0.113.9:1")
				want := tc.allowed
				switch i {
				case 10:
				case 11:
					want = tc.refused
				default:
					continue
				}
				got := response{res.Header.Get("X-RateLimit-Remaining"), res.Header.Get("X-RateLimit-Reset"), res.Header.Get("RateLimit"), res.Header.Get("Retry-After")}
				if got != want || res.Header.Get("RateLimit-Policy") != tc.policy || res.Header.Get("X-RateLimit-Limit") != "10" {
					t.Errorf("%v on %s, request %d: got %+v policy %q, want %+v policy %q", tc.alg, backend, i, got, res.Header.Get("RateLimit-Policy"), want, tc.policy)
				}
			}
		}
	}
}

// An anchored fixed window opens at the client's first request (12:00:45)
// and lasts a whole window, where an aligned one ends at 12:01:00.
func TestAnchoredWindowHeaders(t *testing.T) {
	at := mwtest.Epoch.Add(45 * time.Second)
	for _, tc := range []struct {
		anchored    bool
		retry, next string
	}{{false, "15", `"r";r=0;t=15`}, {true, "60", `"r";r=0;t=60`}} {
		mw := mwtest.New(t, memstore.Must(), []middleware.Rule{{Rule: limiter.Rule{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Minute, Anchored: tc.anchored}}, Identity: keyfunc.IP()}},
			middleware.WithHeaders(headers.Both), limiter.WithClock(func() time.Time { return at }))
		h := mw(ok)
		for range 10 {
			do(h, "GET", "/", "203.0.113.9:1")
		}
		res := do(h, "GET", "/", "203.0.113.9:1")
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != tc.retry || res.Header.Get("RateLimit") != tc.next {
			t.Errorf("anchored %v: %d Retry-After %q RateLimit %q, want 429, %q, %q", tc.anchored, res.StatusCode,
				res.Header.Get("Retry-After"), res.Header.Get("RateLimit"), tc.retry, tc.next)
		}
	}
}
