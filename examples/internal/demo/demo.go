// Package demo holds what the chi and stdlib examples share: the Redis
// connection (a real server from REDIS_URL, or an in-process miniredis) and
// the three rate limits they mount.
package demo

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// Redis connects to REDIS_URL (e.g. redis://127.0.0.1:6379/0) when it is
// set, else starts an in-process miniredis. It returns the client, a
// description for the console, and a function that releases both.
func Redis() (*redis.Client, string, func(), error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		rdb := redis.NewClient(opt)
		return rdb, "Redis at " + opt.Addr, func() { rdb.Close() }, nil
	}
	srv, err := miniredis.Run()
	if err != nil {
		return nil, "", nil, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	return rdb, "in-process miniredis (set REDIS_URL to use a real Redis)", func() { rdb.Close(); srv.Close() }, nil
}

// Limits are the middlewares the examples mount.
type Limits struct {
	// API stacks 20 requests per minute per client IP (sliding window) with
	// 1000 per minute for everyone (fixed window), decided together.
	API func(http.Handler) http.Handler
	// Login allows 5 attempts per 15 minutes per client IP and username
	// (exact sliding log), and sends the IETF headers too.
	Login func(http.Handler) http.Handler
	// Reports gives each API key (X-API-Key, hashed) a token bucket of 10
	// refilled at 1 per second; no key is 401.
	Reports func(http.Handler) http.Handler
}

// NewLimits builds the examples' limits: one limiter on rdb with opts
// holds the rules of all three. TRUSTED_PROXIES (comma-separated CIDRs)
// makes the client IP come from forwarding headers set by those proxies;
// without it the TCP peer is the client. FORWARDING_HEADER names the one
// field they set (X-Real-IP, X-Forwarded-For or Forwarded), then the only
// one read; unset, the proxies must strip the fields they do not set, or
// a client chooses its address. REDIS_TIMEOUT (a Go duration such as
// 250ms) bounds each decision's wait for Redis; unset, the store's
// default (100 ms) applies.
func NewLimits(rdb redis.Scripter, opts ...limiter.Option) (Limits, error) {
	var proxies []string
	if v := os.Getenv("TRUSTED_PROXIES"); v != "" {
		proxies = strings.Split(v, ",")
	}
	ip, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: proxies, Header: os.Getenv("FORWARDING_HEADER")})
	if err != nil {
		return Limits{}, err
	}
	api := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.SlidingWindow{Limit: 20, Window: time.Minute}}, Identity: ip},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Minute}}, Identity: keyfunc.Constant("all")},
	}
	login := []middleware.Rule{
		{Rule: limiter.Rule{Name: "login", Algorithm: algorithms.SlidingLog{Limit: 5, Window: 15 * time.Minute}}, Identity: keyfunc.Join(ip, keyfunc.FormValue("username")),
			AltIdentity: ip},
	}
	reports := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.TokenBucket{Capacity: 10, Rate: 1, Period: time.Second}}, Identity: keyfunc.Header("X-API-Key")},
	}
	var storeOpts []redisstore.Option
	if v := os.Getenv("REDIS_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("%v is not positive", d)
		}
		if err != nil {
			return Limits{}, fmt.Errorf("REDIS_TIMEOUT: %w", err)
		}
		storeOpts = append(storeOpts, redisstore.WithTimeout(d))
	}
	store, err := redisstore.New(rdb, storeOpts...)
	if err != nil {
		return Limits{}, err
	}
	lim, err := limiter.New(store, guard.Limits(slices.Concat(api, login, reports)), opts...)
	if err != nil {
		return Limits{}, err
	}
	var l Limits
	if l.API, err = middleware.NewWithLimiter(lim, api); err != nil {
		return Limits{}, err
	}
	if l.Login, err = middleware.NewWithLimiter(lim, login, middleware.WithHeaders(headers.Both)); err != nil {
		return Limits{}, err
	}
	l.Reports, err = middleware.NewWithLimiter(lim, reports)
	return l, err
}

// Curls are the commands to try against a server on addr.
func Curls(addr string) string {
	return strings.Join([]string{
		"  # 20 per minute per IP, then 429 with Retry-After:",
		fmt.Sprintf("  for i in $(seq 22); do curl -s -o /dev/null -w '%%{http_code} ' http://%s/api/items/1; done; echo", addr),
		fmt.Sprintf("  curl -i http://%s/api/items/1", addr),
		"  # 5 login attempts per 15 minutes per IP and username (JSON problem body):",
		fmt.Sprintf("  for i in $(seq 6); do curl -s -H 'Accept: application/json' -d username=alice http://%s/login; echo; done", addr),
		"  # a token bucket per API key; no key is 401:",
		fmt.Sprintf("  curl -i -H 'X-API-Key: k1' http://%s/v1/reports", addr),
	}, "\n")
}

// Text is a handler that writes s.
func Text(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, s)
	}
}
