// Command config serves the chi and stdlib examples' API with its rate
// limits in a file, ratelimit.yaml, which it reloads when the file changes
// (checked every second: a Kubernetes ConfigMap update or an editor's save)
// and on SIGHUP, without a restart and without losing counts.
//
//	go run ./examples/config                      # in-process miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/config
//	go run ./examples/config -rules /etc/ratelimit/ratelimit.yaml
//	kill -HUP <pid>                               # reload now
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/examples/internal/demo"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	rules := flag.String("rules", "examples/config/ratelimit.yaml", "the rules file")
	flag.Parse()
	if err := serve(*addr, *rules); err != nil {
		log.Fatal(err) // a file's problems each with its line and column
	}
}

// serve serves until SIGINT or SIGTERM, then closes what it opened.
func serve(addr, rules string) error {
	rdb, where, closeRedis, err := demo.Redis()
	if err != nil {
		return err
	}
	defer closeRedis()
	h, limits, err := newHandler(rdb, rules)
	if err != nil {
		return err
	}
	defer limits.Close() // gives back leased units, once the server has stopped

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go limits.Watch(ctx, time.Second)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			_ = limits.Reload() // an invalid file is logged and changes nothing
		}
	}()

	fmt.Printf("config example on http://%s, rules from %s (reloaded on change and SIGHUP, pid %d), rate limits in %s\nTry:\n%s\n",
		addr, rules, os.Getpid(), where, demo.Curls(addr))
	return demo.Serve(ctx, addr, h)
}

// newHandler serves the examples' API with the limits of the file at
// path, on rdb with opts: the stack "api" wired by name on /api/, the
// others by the patterns the file gives them.
func newHandler(rdb redis.Scripter, path string, opts ...limiter.Option) (http.Handler, *config.Limits, error) {
	store, err := redisstore.New(rdb)
	if err != nil {
		return nil, nil, err
	}
	limits, err := config.Load(path, store, config.WithLimiterOptions(opts...),
		config.WithMiddlewareOptions(middleware.WithHeaders(headers.Both)))
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/items/{id}", limits.Middleware("api")(demo.Text("an item")))
	mux.Handle("POST /login", demo.Text("welcome"))
	mux.Handle("GET /v1/reports", demo.Text("a report"))
	mux.Handle("GET /health", demo.Text("ok"))
	return limits.Handler(mux), limits, nil
}
