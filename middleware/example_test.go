package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// newRedis starts an in-process Redis whose TIME is fixed, standing in for
// redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}).
func newRedis() (*redis.Client, func()) {
	srv, _ := miniredis.Run()
	srv.SetTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	return rdb, func() { rdb.Close(); srv.Close() }
}

// get sends n requests from one client and prints each status and headers.
func get(h http.Handler, path string, n int) {
	for range n {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = "203.0.113.9:4242"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d remaining=%s retry-after=%q\n", w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("Retry-After"))
	}
}

var getItem = func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "an item") }

// Two rules stacked on a chi route group: per client IP and global, decided
// in one Redis round trip, all-or-nothing.
func Example() {
	rdb, stop := newRedis()
	defer stop()

	limit, err := middleware.New(rdb, []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.SlidingWindow{Limit: 2, Window: time.Minute}},
			Identity: keyfunc.IP()},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.GCRA{Rate: 5000, Period: time.Second, Burst: 10000}},
			Identity: keyfunc.Constant("all")},
	})
	if err != nil {
		panic(err) // an invalid rule, named
	}

	r := chi.NewRouter()
	r.Route("/api", func(r chi.Router) {
		r.Use(limit) // both rules, one round trip, all-or-nothing
		r.Get("/items/{id}", getItem)
	})

	get(r, "/api/items/1", 3)
	// Output:
	// 200 remaining=1 retry-after=""
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="61"
}

// The one-line form, on net/http's ServeMux.
func ExampleLimitByIP() {
	rdb, stop := newRedis()
	defer stop()

	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", middleware.LimitByIP(rdb, 100, time.Minute)(http.HandlerFunc(getItem)))

	get(mux, "/items/1", 2)
	// Output:
	// 200 remaining=99 retry-after=""
	// 200 remaining=98 retry-after=""
}

// A limiter of your own, built piece by piece, each with its own options:
// the Redis store with a timeout, the limiter with a fallback store while
// Redis is away, the middleware with its error handler. Here Redis is down
// from the start, so the in-process fallback decides.
func ExampleNewWithLimiter() {
	rdb, stop := newRedis()
	stop() // Redis is down from the start

	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Minute, Burst: 1}}, Identity: keyfunc.IP()},
	}
	store, err := redisstore.New(rdb, redisstore.WithTimeout(50*time.Millisecond))
	if err != nil {
		panic(err)
	}
	lim, err := limiter.New(store, guard.Limits(rules), limiter.WithFallback(memstore.Must()))
	if err != nil {
		panic(err)
	}
	limit, err := middleware.NewWithLimiter(lim, rules,
		middleware.WithErrorHandler(func(*http.Request, error) {})) // a real service logs it
	if err != nil {
		panic(err)
	}

	get(limit(http.HandlerFunc(getItem)), "/items/1", 2)
	// Output:
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="60"
}

// In tests (or a single instance), the in-process memstore needs no Redis.
// Passing a clock to the limiter fixes the instants decisions are made at.
func ExampleNewWithLimiter_memstore() {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}}, Identity: keyfunc.IP()},
	}
	lim, err := limiter.New(memstore.Must(), guard.Limits(rules),
		limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	limit, err := middleware.NewWithLimiter(lim, rules)
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(getItem))

	get(h, "/items/1", 2)
	now = now.Add(time.Minute) // the next window
	get(h, "/items/1", 1)
	// Output:
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="60"
	// 200 remaining=0 retry-after=""
}

// A login rule that counts only failed attempts: the cost is settled after
// the response, 1 for a 401 and 0 otherwise; once 3 failures are spent,
// the client is blocked for 15 minutes.
func ExampleRule_settle() {
	rdb, stop := newRedis()
	defer stop()

	loginLimit, err := middleware.New(rdb, []middleware.Rule{{
		Rule: limiter.Rule{Name: "login", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Minute}, Penalty: 15 * time.Minute}, Identity: keyfunc.IP(),
		Settle: func(_ *http.Request, end guard.End) int {
			if end.Status == http.StatusUnauthorized {
				return 1
			}
			return 0
		},
	}})
	if err != nil {
		panic(err)
	}
	wrongPassword := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "wrong password", http.StatusUnauthorized)
	})
	get(loginLimit(http.HandlerFunc(getItem)), "/login", 5) // successful logins: free
	get(loginLimit(wrongPassword), "/login", 4)
	// Output:
	// 200 remaining=2 retry-after=""
	// 200 remaining=2 retry-after=""
	// 200 remaining=2 retry-after=""
	// 200 remaining=2 retry-after=""
	// 200 remaining=2 retry-after=""
	// 401 remaining=2 retry-after=""
	// 401 remaining=1 retry-after=""
	// 401 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="900"
}

// At most 10 requests in flight per client, and 100 a minute: the slot is
// taken in the same decision as the rate limit, and released when the
// handler returns.
func ExampleRule_inFlight() {
	rdb, stop := newRedis()
	defer stop()

	limit, err := middleware.New(rdb, []middleware.Rule{
		{Rule: limiter.Rule{Name: "in-flight", Algorithm: algorithms.Concurrency{Limit: 10, TTL: time.Minute}}, Identity: keyfunc.IP()},
		{Rule: limiter.Rule{Name: "per-minute", Algorithm: algorithms.SlidingWindow{Limit: 100, Window: time.Minute}}, Identity: keyfunc.IP()},
	}, middleware.WithHeaders(headers.IETF))
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(getItem))

	r := httptest.NewRequest(http.MethodGet, "/report", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("RateLimit-Policy"))
	// Output:
	// 200 "in-flight";q=10;qu="concurrent-requests", "per-minute";q=100;w=60
}

// An admin endpoint or tool shares the service's rules value: its limiter
// acts on exactly the middleware's state, and finds a client by what the
// operator knows, here the raw API key, through the rule's Key (which
// hashes it). Resetting by the raw key itself reaches nothing, and says so.
func Example_operator() {
	rdb, stop := newRedis()
	defer stop()
	ctx := context.Background()

	rules := []middleware.Rule{{Rule: limiter.Rule{Name: "per-key", Blockable: true, Algorithm: algorithms.SlidingWindow{Limit: 100, Window: time.Minute}}, Identity: keyfunc.Header("X-API-Key")}}
	store, err := redisstore.New(rdb) // the service's store, or another on the same client
	if err != nil {
		panic(err)
	}
	limit, err := middleware.New(rdb, rules)
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(getItem))

	admin, err := limiter.New(store, guard.Limits(rules))
	if err != nil {
		panic(err)
	}
	client, _ := http.NewRequest(http.MethodGet, "/", nil)
	client.Header.Set("X-API-Key", "sk-live-1234")
	id, _ := rules[0].Identity(client)
	fmt.Println(admin.Block(ctx, "per-key", id, time.Hour))
	fmt.Println(admin.Reset(ctx, "per-key", "sk-live-1234"))

	w := httptest.NewRecorder()
	h.ServeHTTP(w, client)
	fmt.Println(w.Code)
	// Output:
	// <nil>
	// ratelimit: no state for this rule and identity: rule "per-key"
	// 429
}
