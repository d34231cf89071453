// Command chi serves the same API as the stdlib example with a chi router:
// per-IP plus global limits on the /api group (r.Use), a strict
// per-IP-and-username limit on /login and a token bucket per API key on
// /v1/reports (r.With).
//
//	go run ./examples/chi               # in-process miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/chi
package main

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/examples/internal/demo"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

func main() { demo.Main("chi", newHandler) }

func newHandler(rdb redis.Scripter, opts ...limiter.Option) (http.Handler, error) {
	limits, err := demo.NewLimits(rdb, opts...)
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Route("/api", func(r chi.Router) {
		r.Use(limits.API)
		r.Get("/items/{id}", demo.Text("an item"))
	})
	r.With(limits.Login).Post("/login", demo.Text("welcome"))
	r.With(limits.Reports).Get("/v1/reports", demo.Text("a report"))
	r.Get("/health", demo.Text("ok"))
	return r, nil
}
