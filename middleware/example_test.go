package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Two requests a minute per client IP, stacked with a global limit; the
// third request is answered 429 with the headers.
func Example() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	srv.SetTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) // Redis TIME
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	limit := middleware.Must(rdb, []middleware.Rule{
		{Name: "per-ip", Key: keyfunc.IP(), Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Minute}},
		{Name: "global", Key: keyfunc.Constant("all"), Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Minute}},
	})
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))

	for range 3 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.9:4242"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d remaining=%s retry-after=%q\n", w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 remaining=1 retry-after=""
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="60"
}
