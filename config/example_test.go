package config_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// ExampleLoad loads examples/config/ratelimit.yaml (shown in the README)
// and wires its stack "api" on a route: 20 requests a minute per client
// IP, then 429.
func ExampleLoad() {
	store := memstore.Must() // or redisstore.New(rdb)
	limits, err := config.Load("../examples/config/ratelimit.yaml", store)
	if err != nil {
		fmt.Println(err) // every problem of the file, with its line and column
		return
	}
	defer limits.Close()
	mux := http.NewServeMux()
	mux.Handle("GET /api/items/{id}", limits.Middleware("api")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))

	codes := map[int]int{}
	for range 21 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/items/1", nil))
		codes[w.Code]++
	}
	fmt.Println(codes[http.StatusOK], "allowed,", codes[http.StatusTooManyRequests], "refused")
	// Output: 20 allowed, 1 refused
}
