// Package mwtest holds the helpers shared by the middleware package's tests
// and the black-box tests at the module root.
package mwtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Epoch is the instant Clock decides at.
var Epoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// Clock makes a middleware decide at Epoch.
func Clock() middleware.Option {
	return middleware.WithLimiterOptions(limiter.WithClock(func() time.Time { return Epoch }))
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
	return middleware.Rule{Name: "per-ip", Key: keyfunc.IP(), Algorithm: algorithms.FixedWindow{Limit: limit, Window: time.Minute}}
}

// Problem is the JSON body of a 429 or of a fail-closed 503.
type Problem struct {
	Type, Title, Detail string
	Status              int
	ViolatedPolicies    []string `json:"violated-policies"`
	RetryAfter          int64    `json:"retry_after"`
	Blocked             []string `json:"blocked"`
}

// BenchHook measures the middleware on the memstore (no network hides the
// hook's share) without a hook and with hook, as two sub-benchmarks.
func BenchHook(b *testing.B, hook func(middleware.Event)) {
	for _, name := range []string{"without-hook", "with-hook"} {
		b.Run(name, func(b *testing.B) {
			var opts []middleware.Option
			if name == "with-hook" {
				opts = append(opts, middleware.WithHook(hook))
			}
			mw, err := middleware.NewWithStore(memstore.Must(), []middleware.Rule{{Name: "per-ip", Key: keyfunc.IP(),
				Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}}}, opts...)
			if err != nil {
				b.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
