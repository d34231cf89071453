// Package mwtest holds the helpers shared by the middleware package's tests
// and the black-box tests at the module root.
package mwtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Epoch is the instant Clock decides at.
var Epoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// At makes a limiter decide at Epoch.
func At() limiter.Option {
	return limiter.WithClock(func() time.Time { return Epoch })
}

// Stack is what a service on Redis configures, piece by piece: the Redis
// store's options, the limiter's and the middleware's.
type Stack struct {
	Store []redisstore.Option
	Lim   []limiter.Option
	MW    []middleware.Option
}

// RedisStore is a Redis store on rdb with opts. It fails t on an error.
func RedisStore(t testing.TB, rdb redis.Scripter, opts ...redisstore.Option) store.Store {
	t.Helper()
	s, err := redisstore.New(rdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// OnRedis is New on rdb with the options of s.
func OnRedis(t testing.TB, rdb redis.Scripter, rules []middleware.Rule, s Stack) func(http.Handler) http.Handler {
	t.Helper()
	return New(t, rdb, rules, s.options()...)
}

// Limit is New on st with limiter options lopts and middleware options
// opts.
func Limit(t testing.TB, st store.Store, rules []middleware.Rule, lopts []limiter.Option, opts ...middleware.Option) func(http.Handler) http.Handler {
	t.Helper()
	return New(t, st, rules, Stack{Lim: lopts, MW: opts}.options()...)
}

// options lists s's options for New.
func (s Stack) options() []any {
	var opts []any
	for _, o := range s.Store {
		opts = append(opts, o)
	}
	for _, o := range s.Lim {
		opts = append(opts, o)
	}
	for _, o := range s.MW {
		opts = append(opts, o)
	}
	return opts
}

// New builds the middleware of rules on backend (a store.Store, or a
// redis.Scripter put in a Redis store) and gives each option to the piece
// it configures: a redisstore.Option to the store, a limiter.Option to the
// limiter, a middleware.Option to the middleware. It fails t on an error.
func New(t testing.TB, backend any, rules []middleware.Rule, opts ...any) func(http.Handler) http.Handler {
	t.Helper()
	mw, err := Build(backend, rules, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// Build is New returning its error.
func Build(backend any, rules []middleware.Rule, opts ...any) (func(http.Handler) http.Handler, error) {
	var s Stack
	for _, o := range opts {
		switch o := o.(type) {
		case redisstore.Option:
			s.Store = append(s.Store, o)
		case limiter.Option:
			s.Lim = append(s.Lim, o)
		case middleware.Option:
			s.MW = append(s.MW, o)
		default:
			return nil, fmt.Errorf("mwtest: %T is not an option", o)
		}
	}
	st, ok := backend.(store.Store)
	if !ok {
		rs, err := redisstore.New(backend.(redis.Scripter), s.Store...)
		if err != nil {
			return nil, err
		}
		st = rs
	}
	lim, err := limiter.New(st, guard.Limits(rules), s.Lim...)
	if err != nil {
		return nil, err
	}
	return middleware.NewWithLimiter(lim, rules, s.MW...)
}

// OK answers "ok".
var OK = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// Do sends one request from remote (with header pairs) and returns the
// response.
func Do(h http.Handler, method, path, remote string, hdr ...string) *http.Response {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// Body reads a response body.
func Body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// PerIP is a fixed window of limit per minute per client IP, named "per-ip".
func PerIP(limit int) middleware.Rule {
	return middleware.Rule{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: limit, Window: time.Minute}}, Identity: keyfunc.IP()}
}

// Problem is the JSON body of a 429 or of a fail-closed 503.
type Problem struct {
	Type, Title, Detail string
	Status              int
	ViolatedPolicies    []string `json:"violated-policies"`
	RetryAfter          int64    `json:"retry_after"`
	Blocked             []string `json:"blocked"`
}
