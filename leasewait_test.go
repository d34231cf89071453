package ratelimit_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/sf"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// TestLeasedRefusalHeaders: two instances of a service, each its own
// go-redis client, limiter and middleware, stack a per-IP rule with a
// global rule of 50 an hour leased for a second; two more stack the same
// rules unleased. The same requests, one every 5 ms, alternate between
// the instances of each pair, on every leasable algorithm, on miniredis
// and a real redis-server. Once both pairs have admitted the 50 and
// refuse, a leased refusal's Retry-After and the global rule's RateLimit
// t are no shorter than the unleased refusal's (a second aside: the two
// pairs spent their last units up to a second apart, which a bucket
// refills from). It runs in parallel: its servers are its own, its clock
// is passed in and its store timeouts are 5 s.
func TestLeasedRefusalHeaders(t *testing.T) {
	t.Parallel()
	for _, b := range redistest.Backends(t) {
		for a, alg := range []algorithms.Algorithm{
			algorithms.FixedWindow{Limit: 50, Window: time.Hour},
			algorithms.SlidingWindow{Limit: 50, Window: time.Hour},
			algorithms.TokenBucket{Capacity: 50, Rate: 50, Period: time.Hour},
			algorithms.LeakyBucket{Capacity: 50, Rate: 50, Period: time.Hour},
			algorithms.GCRA{Rate: 50, Period: time.Hour, Burst: 50},
		} {
			now := mwtest.Epoch
			clock := limiter.WithClock(func() time.Time { return now })
			pair := func(lease time.Duration) []http.Handler {
				rules := []middleware.Rule{
					{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}}, Identity: keyfunc.IP()},
					{Rule: limiter.Rule{Name: "global", Algorithm: alg, Lease: lease}, Identity: keyfunc.Constant("all")},
				}
				prefix := limiter.WithPrefix("leasedheaders" + b.Name + strconv.Itoa(a) + lease.String())
				var hs []http.Handler
				for range 2 {
					rdb := redis.NewClient(&redis.Options{Addr: b.Client.Options().Addr})
					t.Cleanup(func() { _ = rdb.Close() })
					store, err := redisstore.New(rdb, redisstore.WithTimeout(5*time.Second))
					if err != nil {
						t.Fatal(err)
					}
					lim, err := limiter.New(store, guard.Limits(rules), clock, prefix)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = lim.Close() })
					mw, err := middleware.NewWithLimiter(lim, rules, middleware.WithHeaders(headers.Both))
					if err != nil {
						t.Fatal(err)
					}
					hs = append(hs, mw(ok))
				}
				return hs
			}
			leased, unleased := pair(time.Second), pair(0)
			admitted := map[bool]int{}
			compared := 0
			for i := range 400 {
				now = now.Add(5 * time.Millisecond)
				got := do(leased[i%2], "GET", "/", "203.0.113.9:1")
				want := do(unleased[i%2], "GET", "/", "203.0.113.9:1")
				for isLeased, res := range map[bool]*http.Response{true: got, false: want} {
					if res.StatusCode == http.StatusOK {
						admitted[isLeased]++
					}
				}
				if admitted[true] < 50 || admitted[false] < 50 || got.StatusCode != 429 || want.StatusCode != 429 {
					continue
				}
				compared++
				for _, field := range []struct{ name, got, want string }{
					{"Retry-After", got.Header.Get("Retry-After"), want.Header.Get("Retry-After")},
					{"RateLimit t", globalT(got), globalT(want)},
				} {
					g, errG := strconv.Atoi(field.got)
					w, errW := strconv.Atoi(field.want)
					if errG != nil || errW != nil || g < w-1 {
						t.Fatalf("%s %v, request %d: leased refusal's %s %q, unleased %q", b.Name, alg, i, field.name, field.got, field.want)
					}
				}
			}
			if compared < 100 || admitted[true] != 50 {
				t.Fatalf("%s %v: %d refusals compared (want 100 or more); admitted %d leased, want 50", b.Name, alg, compared, admitted[true])
			}
		}
	}
}

// globalT is the t parameter of the "global" member of res's RateLimit
// field, or "".
func globalT(res *http.Response) string {
	for _, m := range sf.Members(res.Header.Get("RateLimit")) {
		if sf.Name(m) == "global" {
			v, _ := sf.Param(m, "t")
			return v
		}
	}
	return ""
}
