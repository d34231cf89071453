package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// The README's whole program, served by httptest instead of
// ListenAndServe: 20 requests a minute per client IP.
func Example() {
	srv, err := miniredis.Run() // stands in for your Redis
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	limit, err := middleware.New(rdb, []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.SlidingWindow{Limit: 20, Window: time.Minute}},
			Identity: keyfunc.IP()},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /hello", limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})))
	counts := map[int]int{}
	for range 21 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", "/hello", nil))
		counts[w.Code]++
	}
	fmt.Println(counts[http.StatusOK], "served,", counts[http.StatusTooManyRequests], "refused")
	// Output: 20 served, 1 refused
}
