// Command stdlib serves a small API on net/http's ServeMux with three rate
// limits: per-IP plus global on /api, a strict per-IP-and-username limit on
// /login, and a token bucket per API key on /v1/reports.
//
//	go run ./examples/stdlib            # in-process miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/stdlib
package main

import (
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/examples/internal/demo"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

func main() { demo.Main("net/http", newHandler) }

func newHandler(rdb redis.Scripter, opts ...limiter.Option) (http.Handler, error) {
	limits, err := demo.NewLimits(rdb, opts...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/items/{id}", limits.API(demo.Text("an item")))
	mux.Handle("POST /login", limits.Login(demo.Text("welcome")))
	mux.Handle("GET /v1/reports", limits.Reports(demo.Text("a report")))
	mux.Handle("GET /health", demo.Text("ok"))
	return mux, nil
}
