package ratelimit_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

type idKey struct{}

// hostileIdentities are identities a client could choose.
var hostileIdentities = []string{
	"", // rejected, never a shared bucket
	"a", "{", "}", "{a}", "a}b", "}{", "per-user:a", "#", "#" + strings.Repeat("0", 32),
	"line\nbreak", "crlf\r\nSet-Cookie: x", "nul\x00", "\xff\xfe\xfd", "ünïcödé 🙂", " ", "a b",
	strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("y", 1<<20),
}

// TestHostileIdentitiesThroughHTTP: every identity gets its own bounded key
// with one intact hash tag on a real Redis, and the empty one is rejected.
func TestHostileIdentitiesThroughHTTP(t *testing.T) {
	s := redistest.Start(t)
	h := limit(t, s.Client, []middleware.Rule{{Rule: limiter.Rule{Name: "per-user", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 1}},
		Identity: func(r *http.Request) (string, error) { return r.Context().Value(idKey{}).(string), nil }}},
		stack{MW: []middleware.Option{middleware.WithErrorHandler(func(*http.Request, error) {})}})(ok)
	for _, id := range hostileIdentities {
		for i, want := range []int{200, 429} {
			if id == "" {
				want = 401
			}
			if got := serve(h, withIdentity(id)); got != want {
				t.Errorf("identity %q request %d: %d, want %d", trunc(id), i, got, want)
			}
		}
	}
	keys, err := s.Client.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(keys), len(hostileIdentities)-1; got != want {
		t.Errorf("%d keys for %d non-empty identities: some collided or leaked", got, want)
	}
	for _, k := range keys {
		if len(k) > 100 || strings.Count(k, "{") != 1 || strings.Count(k, "}") != 1 || !strings.HasPrefix(k, "ratelimit:{per-user:") {
			t.Errorf("key %q: unbounded or broken hash tag", trunc(k))
		}
	}
}

func withIdentity(id string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "203.0.113.9:1"
	return r.WithContext(context.WithValue(r.Context(), idKey{}, id))
}

func serve(h http.Handler, r *http.Request) int {
	w := &statusRecorder{header: http.Header{}}
	h.ServeHTTP(w, r)
	return w.status
}

type statusRecorder struct {
	header http.Header
	status int
}

func (w *statusRecorder) Header() http.Header { return w.header }
func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	return len(b), nil
}
func (w *statusRecorder) WriteHeader(code int) { w.status = code }

func trunc(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}
