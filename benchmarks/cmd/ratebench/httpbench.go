package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// clientKey is the identity both middlewares use: a header the load
// generator sets, so both pay the same extraction.
func clientKey(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil }

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// redisRateMiddleware is the usual way to put redis_rate in front of a
// handler: Allow, then the headers our middleware writes by default
// (X-RateLimit-Limit, -Remaining and -Reset, and Retry-After on a refusal),
// written from redis_rate's Result, and a 429.
func redisRateMiddleware(l *redis_rate.Limiter, limit redis_rate.Limit) func(http.Handler) http.Handler {
	quota := strconv.Itoa(limit.Burst)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key, _ := clientKey(r)
			res, err := l.Allow(r.Context(), key, limit)
			if err != nil {
				next.ServeHTTP(w, r) // fail open, like ours by default
				return
			}
			h := w.Header()
			h.Set("X-RateLimit-Limit", quota)
			h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
			h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(res.ResetAfter+time.Second-1).Unix(), 10))
			if res.Allowed == 0 {
				h.Set("Retry-After", strconv.Itoa(int((res.RetryAfter+time.Second-1)/time.Second)))
				http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// printServers prints the medians of a server mode's rounds under title,
// each server's rate (in unit) also as a ratio to the first's, no limiter,
// and beside it the calls that failed in all rounds (not in the rate);
// where the servers ran in processes of their own, their CPU per call too,
// how much of it is above no limiter's, and Redis's in scripts per call.
func printServers(title, unit string, names []string, results [][]stats) {
	fmt.Printf("\n## %s\n\n", title)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	base := median(results[0])
	head := fmt.Sprintf("server\t%s\tx no limiter\terrors\tp50\tp99\t", unit)
	if base.cpuUS > 0 {
		head += "server CPU µs/call\tabove no limiter\tRedis µs/call\t"
	}
	fmt.Fprintln(w, head)
	for i, name := range names {
		m := median(results[i])
		row := fmt.Sprintf("%s\t%.0f\t%.2f\t%d\t%v\t%v\t", name, m.ops, m.ops/base.ops, m.err, m.p50.Round(time.Microsecond), m.p99.Round(time.Microsecond))
		if base.cpuUS > 0 {
			redis := "-"
			if m.redisUS > 0 {
				redis = fmt.Sprintf("%.1f", m.redisUS)
			}
			row += fmt.Sprintf("%.1f\t%+.1f\t%s\t", m.cpuUS, m.cpuUS-base.cpuUS, redis)
		}
		fmt.Fprintln(w, row)
	}
	w.Flush()
}

// httpServer is one server of the HTTP mode: a handler built on the
// clients of an env. id names it to -serve.
type httpServer struct {
	id, name string
	handler  func(e *env) (http.Handler, error)
}

// httpServers are the HTTP mode's servers: a trivial handler with no
// limiter, behind our middleware, and behind redisRateMiddleware, plain
// and on an AutoPipeliner (the best a redis_rate user can build).
func httpServers() []httpServer {
	q := serverQuota
	limit := redis_rate.Limit{Rate: q.limit, Burst: q.limit, Period: q.period}
	return []httpServer{
		{"http-none", "no limiter", func(*env) (http.Handler, error) { return okHandler, nil }},
		{"http-ours", "ours (gcra middleware)", func(e *env) (http.Handler, error) {
			ours, err := middleware.New(e.rdb, []middleware.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: gcra(q)}, Identity: clientKey}})
			if err != nil {
				return nil, err
			}
			return ours(okHandler), nil
		}},
		{"http-redis_rate", "redis_rate middleware", func(e *env) (http.Handler, error) {
			return redisRateMiddleware(redis_rate.NewLimiter(e.rdb), limit)(okHandler), nil
		}},
		{"http-redis_rate-ap", "redis_rate middleware, autopipelined", func(e *env) (http.Handler, error) {
			return redisRateMiddleware(redis_rate.NewLimiter(apRediser{e.ap, e.rdb}), limit)(okHandler), nil
		}},
	}
}

// httpBench serves each of httpServers in this process over loopback and
// drives each with goroutines for d per round; it returns our req/s over
// redis_rate's plain middleware, and over the better of it and the same
// middleware on an AutoPipeliner.
func httpBench(e *env, goroutines, keys int, d time.Duration, rounds int) (plain, best float64) {
	servers := httpServers()
	handlers := make([]http.Handler, len(servers))
	names := make([]string, len(servers))
	for i, s := range servers {
		h, err := s.handler(e)
		if err != nil {
			fatalf("%s: %v", s.name, err)
		}
		handlers[i], names[i] = h, s.name
	}
	results := make([][]stats, len(servers))
	for r := range rounds {
		for i := range servers {
			j := (i + r) % len(servers)
			srv := httptest.NewServer(handlers[j])
			call, closeClient := httpCaller(srv.URL, goroutines)
			results[j] = append(results[j], measure(call, goroutines, keyNames("http:", keys), d))
			closeClient()
			srv.Close()
		}
	}
	printServers(fmt.Sprintf("HTTP: trivial handler over loopback, %d client goroutines", goroutines), "req/s", names, results)
	ops := median(results[1]).ops
	return ops / median(results[2]).ops, ops / max(median(results[2]).ops, median(results[3]).ops)
}

// httpCaller GETs url with the key as its X-Client header, keeping up to
// goroutines connections; a status other than 200 is a refusal. Close the
// connections with the function it returns.
func httpCaller(url string, goroutines int) (decideFunc, func()) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: goroutines}}
	return func(ctx context.Context, key string) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("X-Client", key)
		res, err := client.Do(req)
		if err != nil {
			return false, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK, nil
	}, client.CloseIdleConnections
}
