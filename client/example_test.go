package client_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/client"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// An API allows 2 requests a second. A client that obeys its headers sends
// 3 and gets 3 answers: the third waits until the server said quota is
// back (t=1), instead of being refused; by then 2 units came back.
func ExampleTransport() {
	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "api", Algorithm: algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 2}}, Identity: keyfunc.IP()},
	}
	lim, _ := limiter.New(memstore.Must(), guard.Limits(rules))
	limit, _ := middleware.NewWithLimiter(lim, rules, middleware.WithHeaders(headers.IETF))
	api := httptest.NewServer(limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})))
	defer api.Close()

	c := &http.Client{Transport: &client.Transport{}}
	for range 3 {
		res, err := c.Get(api.URL)
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Println(res.StatusCode, res.Header.Get("RateLimit"))
	}
	// Output:
	// 200 "api";r=1;t=1
	// 200 "api";r=0;t=1
	// 200 "api";r=1;t=1
}
