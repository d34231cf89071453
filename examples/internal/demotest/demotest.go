// Package demotest drives an example server through HTTP and checks its
// rate limits: the same assertions for the chi and the stdlib example.
package demotest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Run builds the example's handler on a fresh miniredis with a fixed clock
// and checks each of its three limits.
func Run(t *testing.T, newHandler func(redis.Scripter, ...limiter.Option) (http.Handler, error)) {
	t.Helper()
	t.Setenv("TRUSTED_PROXIES", "")
	t.Setenv("FORWARDING_HEADER", "")
	// These tests check limits, not latency: miniredis compiles a script
	// afresh on every call, 15-20 ms under the race detector on an idle
	// machine, near the default 100 ms on a loaded one.
	t.Setenv("REDIS_TIMEOUT", "5s")
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	now := time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)
	h, err := newHandler(rdb, limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("api per-ip", func(t *testing.T) {
		for i := 1; i <= 21; i++ {
			res := send(h, "GET", "/api/items/"+strconv.Itoa(i), "203.0.113.9:1", "", nil)
			want := 200
			if i == 21 {
				want = 429
			}
			if res.Code != want {
				t.Fatalf("request %d: %d, want %d", i, res.Code, want)
			}
			if got, want := res.Header().Get("X-RateLimit-Remaining"), strconv.Itoa(max(0, 20-i)); got != want {
				t.Errorf("request %d: X-RateLimit-Remaining %q, want %q", i, got, want)
			}
		}
		res := send(h, "GET", "/api/items/1", "203.0.113.9:1", "", nil)
		if res.Header().Get("Retry-After") == "" || res.Header().Get("X-RateLimit-Limit") != "20" {
			t.Errorf("429 headers: %v", res.Header())
		}
		if res := send(h, "GET", "/api/items/1", "198.51.100.4:1", "", nil); res.Code != 200 {
			t.Errorf("another IP: %d", res.Code)
		}
		if res := send(h, "GET", "/health", "203.0.113.9:1", "", nil); res.Code != 200 || res.Header().Get("X-RateLimit-Limit") != "" {
			t.Errorf("/health is not limited: %d %v", res.Code, res.Header())
		}
	})
	t.Run("login per ip and username", func(t *testing.T) {
		for i := 1; i <= 6; i++ {
			res := send(h, "POST", "/login", "203.0.113.9:1", "application/json", url.Values{"username": {"alice"}})
			if want := map[bool]int{true: 429, false: 200}[i == 6]; res.Code != want {
				t.Fatalf("attempt %d: %d, want %d", i, res.Code, want)
			}
			if i == 6 {
				var p struct {
					Policies []string `json:"violated-policies"`
				}
				if err := json.Unmarshal(res.Body.Bytes(), &p); err != nil || len(p.Policies) != 1 || p.Policies[0] != "login" {
					t.Errorf("problem body %q: %v", res.Body, err)
				}
				if got := res.Header().Get("RateLimit"); !strings.HasPrefix(got, `"login";r=0;t=`) {
					t.Errorf("RateLimit = %q", got)
				}
			}
		}
		if res := send(h, "POST", "/login", "203.0.113.9:1", "", url.Values{"username": {"bob"}}); res.Code != 200 {
			t.Errorf("another username from the same IP: %d", res.Code)
		}
	})
	t.Run("reports per api key", func(t *testing.T) {
		if res := send(h, "GET", "/v1/reports", "203.0.113.9:1", "", nil); res.Code != 401 {
			t.Errorf("no API key: %d, want 401", res.Code)
		}
		for i := 1; i <= 11; i++ {
			res := send(h, "GET", "/v1/reports", "203.0.113.9:1", "", nil, "X-API-Key", "k1")
			if want := map[bool]int{true: 429, false: 200}[i == 11]; res.Code != want {
				t.Fatalf("request %d: %d, want %d", i, res.Code, want)
			}
			if i == 11 && res.Header().Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q, want 1 (a token refills in 1 s)", res.Header().Get("Retry-After"))
			}
		}
		if keys := srv.Keys(); strings.Contains(strings.Join(keys, " "), "k1") {
			t.Errorf("raw API key stored in Redis: %v", keys)
		}
	})
}

func send(h http.Handler, method, path, remote, accept string, form url.Values, hdr ...string) *httptest.ResponseRecorder {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.RemoteAddr = remote
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
