package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Main runs an example: it connects to Redis (see Redis), builds the
// server's handler with newHandler, listens on -addr (default
// 127.0.0.1:8080, or ADDR), prints the curl lines to try, and stops cleanly
// on SIGINT or SIGTERM.
func Main(name string, newHandler func(redis.Scripter, ...limiter.Option) (http.Handler, error)) {
	def := os.Getenv("ADDR")
	if def == "" {
		def = "127.0.0.1:8080"
	}
	addr := flag.String("addr", def, "listen address")
	flag.Parse()

	rdb, where, closeRedis, err := Redis()
	if err != nil {
		log.Fatal(err)
	}
	defer closeRedis()
	h, err := newHandler(rdb)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("%s example on http://%s, rate limits in %s\nTry:\n%s\n", name, *addr, where, Curls(*addr))
	if err := Serve(ctx, *addr, h); err != nil {
		log.Fatal(err)
	}
}

// Serve serves h on addr until ctx is done, then shuts the server down,
// letting requests under way finish for up to 5 s: it returns once they
// have (what the caller closes next, its limits and Redis, is no longer
// used), or with an error when some were still running then.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	shut := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(shutdown)
		if err != nil {
			_ = srv.Close() // cut what still runs
			err = fmt.Errorf("requests still under way after 5 s, cut short: %w", err)
		}
		shut <- err
	}()
	// ListenAndServe returns as soon as the shutdown begins, before the
	// requests under way have finished: wait for the shutdown itself.
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-shut
}
