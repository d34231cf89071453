package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// The middleware path per request (allocs/op are the client's: the
// redis-server runs in its own process).

func benchMiddleware(b *testing.B, mw func(http.Handler) http.Handler) {
	h := mw(ok)
	reqs := make([]*http.Request, 1024)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/", nil)
		reqs[i].RemoteAddr = "10.1." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256) + ":1"
	}
	w := &statusRecorder{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		clear(w.header)
		h.ServeHTTP(w, reqs[i%len(reqs)])
	}
}

func gcraRule() []middleware.Rule {
	return []middleware.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}}, Identity: keyfunc.IP()}}
}

func BenchmarkMiddlewareRedis(b *testing.B) {
	s := redistest.Start(b)
	benchMiddleware(b, limit(b, s.Client, gcraRule(), stack{}))
}

func BenchmarkMiddlewareRedisContextTimeouts(b *testing.B) {
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { c.Close() })
	benchMiddleware(b, limit(b, c, gcraRule(), stack{}))
}

func BenchmarkMiddlewareMemstore(b *testing.B) {
	benchMiddleware(b, mwtest.Limit(b, memstore.Must(), gcraRule(), nil))
}

// BenchmarkMiddlewareHTTPRate is httprate keyed by client IP over its
// in-memory counter, the in-process peer of BenchmarkMiddlewareMemstore.
func BenchmarkMiddlewareHTTPRate(b *testing.B) {
	benchMiddleware(b, httprate.LimitBy(1_000_000, time.Second, httprate.KeyFunc(keyfunc.IP())))
}
