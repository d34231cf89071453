package middleware

import (
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// LimitByIP is the one-line form: at most n requests per window per client
// IP (the TCP peer, IPv6 grouped by /64; see keyfunc.IP), as a sliding
// window counter on Redis, with every default of New. It panics when n or
// window is invalid. Behind a proxy, or for stacks, use New
// with keyfunc.ClientIP.
//
// Its rule is named after its limit, "ip-<n>-per-<window>" with the
// window as time.Duration prints it ("ip-100-per-1m0s"):
// one-liners of different limits keep separate counts, and one-liners of
// the same limit share theirs, on every route and every instance, which is
// what makes them one limit across replicas. For separate budgets per
// route, use New with a rule name per route.
//
//	r.Use(middleware.LimitByIP(rdb, 100, time.Minute))
func LimitByIP(rdb redis.Scripter, n int, window time.Duration) func(http.Handler) http.Handler {
	limit, err := New(rdb, []Rule{{Identity: keyfunc.IP(), Rule: limiter.Rule{
		Name: "ip-" + strconv.Itoa(n) + "-per-" + window.String(), Algorithm: algorithms.SlidingWindow{Limit: n, Window: window}}}})
	if err != nil {
		panic(err)
	}
	return limit
}
