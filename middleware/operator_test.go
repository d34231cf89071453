package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// login answers 401 unless the password header is right.
var login = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Password") != "secret" {
		http.Error(w, "wrong password", http.StatusUnauthorized)
		return
	}
	_, _ = w.Write([]byte("welcome"))
})

// A login rule of 5 a minute that counts only failures (Settle) admits any
// number of successful logins and exactly 5 failures, then refuses with
// the headers of the rule; a penalty then blocks the client for 15
// minutes, reported in the problem body.
func TestLoginCountsOnlyFailures(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			rule := middleware.Rule{
				Rule: limiter.Rule{Name: "login", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Minute}, Penalty: 15 * time.Minute}, Identity: keyfunc.IP(),
				Settle: func(_ *http.Request, end guard.End) int {
					if end.Status == http.StatusUnauthorized {
						return 1
					}
					return 0
				},
			}
			h := mwtest.New(t, b.Client, []middleware.Rule{rule}, clock(), middleware.WithHeaders(headers.Both),
				limiter.WithPrefix(fmt.Sprintf("login%d", time.Now().UnixNano())))(login)
			for i := range 50 {
				if res := do(h, "POST", "/login", "203.0.113.7:1", "Password", "secret"); res.StatusCode != 200 {
					t.Fatalf("successful login %d: %d", i, res.StatusCode)
				}
			}
			for i := range 5 {
				res := do(h, "POST", "/login", "203.0.113.7:1", "Password", "guess")
				if res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("failed login %d: %d, want 401", i, res.StatusCode)
				}
			}
			res := do(h, "POST", "/login", "203.0.113.7:1", "Password", "secret", "Accept", "application/json")
			if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "900" {
				t.Fatalf("after 5 failures: %d, Retry-After %q; want 429 and the 15-minute penalty", res.StatusCode, res.Header.Get("Retry-After"))
			}
			var p mwtest.Problem
			if err := json.NewDecoder(res.Body).Decode(&p); err != nil || !slices.Equal(p.Blocked, []string{"login"}) || p.RetryAfter != 900 {
				t.Errorf("problem %+v %v, want the login rule blocked for 900 s", p, err)
			}
			if got := res.Header.Get("RateLimit"); got != `"login";r=0;t=900` {
				t.Errorf("RateLimit %q", got)
			}
			if res := do(h, "POST", "/login", "198.51.100.1:1", "Password", "guess"); res.StatusCode != http.StatusUnauthorized {
				t.Errorf("another client: %d, want 401 (not limited)", res.StatusCode)
			}
		})
	}
}

// A ban set through another limiter with the same prefix refuses the client
// at once, on every route its rule guards.
func TestBlockThroughTheMiddleware(t *testing.T) {
	_, c := redistest.Mini(t)
	rule := middleware.Rule{Rule: limiter.Rule{Name: "api", Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 10}, Blockable: true}, Identity: keyfunc.IP()}
	h := mwtest.New(t, c, []middleware.Rule{rule}, clock())(ok)
	admin, err := limiter.New(mwtest.RedisStore(t, c), []limiter.Rule{{Name: "api", Algorithm: rule.Algorithm, Blockable: true}},
		limiter.WithClock(func() time.Time { return mwtest.Epoch }))
	if err != nil {
		t.Fatal(err)
	}
	if res := do(h, "GET", "/", "192.0.2.1:1"); res.StatusCode != 200 {
		t.Fatalf("before the ban: %d", res.StatusCode)
	}
	if err := admin.Block(t.Context(), "api", "192.0.2.1", time.Hour); err != nil {
		t.Fatal(err)
	}
	res := do(h, "GET", "/", "192.0.2.1:1")
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3600" {
		t.Fatalf("banned: %d Retry-After %q, want 429 and 3600", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if body := mwtest.Body(t, res); body != "Too Many Requests: client blocked by rate limit api; retry in 3600 s\n" {
		t.Errorf("body %q", body)
	}
	if err := admin.Unblock(t.Context(), "api", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if res := do(h, "GET", "/", "192.0.2.1:1"); res.StatusCode != 200 {
		t.Fatalf("after Unblock: %d", res.StatusCode)
	}
}

// A cost known only after the response (bytes sent, here) is charged
// exactly: a reservation of 100 settled at the body's length.
func TestSettleByBytesWritten(t *testing.T) {
	_, c := redistest.Mini(t)
	rule := middleware.Rule{
		Rule: limiter.Rule{Name: "bytes", Algorithm: algorithms.TokenBucket{Capacity: 1000, Rate: 1, Period: time.Hour}}, Identity: keyfunc.IP(),
		Cost:   func(*http.Request) int { return 100 },
		Settle: func(_ *http.Request, end guard.End) int { return int(end.Written) },
	}
	var events []guard.Event
	h := mwtest.New(t, c, []middleware.Rule{rule}, clock(), middleware.WithHook(func(e guard.Event) { events = append(events, e) }))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(make([]byte, 30))
			http.NewResponseController(w).Flush() // streaming still works
			_, _ = w.Write(make([]byte, 12))
		}))
	for range 3 {
		if res := do(h, "GET", "/", "192.0.2.9:1"); res.StatusCode != 200 {
			t.Fatal(res.StatusCode)
		}
	}
	if res := do(h, "GET", "/", "192.0.2.9:1"); res.Header.Get("X-RateLimit-Remaining") != fmt.Sprint(1000-3*42-100) {
		t.Errorf("after 3 responses of 42 bytes: %s remaining, want %d", res.Header.Get("X-RateLimit-Remaining"), 1000-3*42-100)
	}
	for _, e := range events {
		if e.Err != nil {
			t.Errorf("event error: %v", e.Err)
		}
	}
}

// An operator acts on exactly the middleware's state by sharing its rules
// value (guard.Limits) and finds a client by what it knows, the raw API
// key, through the rule's Key: the block reaches the client. A call that
// cannot reach the state it names says so: a reset by the raw key (the
// state is under its hash), or by a limiter that declared the rule with
// another algorithm (its keys end otherwise), is ErrNotFound, not ok.
func TestOperatorReachesTheMiddlewareState(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			rules := []middleware.Rule{{Rule: limiter.Rule{Name: "per-key", Blockable: true, Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}, Identity: keyfunc.Header("X-API-Key")}}
			prefix := limiter.WithPrefix(fmt.Sprintf("op%d", time.Now().UnixNano()))
			at := limiter.WithClock(func() time.Time { return mwtest.Epoch })
			h := mwtest.New(t, b.Client, rules, prefix, at)(ok)
			admin, err := limiter.New(mwtest.RedisStore(t, b.Client), guard.Limits(rules), prefix, at)
			if err != nil {
				t.Fatal(err)
			}
			if res := do(h, "GET", "/", "203.0.113.9:1", "X-API-Key", "the-raw-api-key"); res.StatusCode != 200 {
				t.Fatalf("first request: %d", res.StatusCode)
			}

			client, _ := http.NewRequest("GET", "/", nil)
			client.Header.Set("X-API-Key", "the-raw-api-key")
			id, err := rules[0].Identity(client)
			if err != nil {
				t.Fatal(err)
			}
			if err := admin.Reset(ctx, "per-key", "the-raw-api-key"); !errors.Is(err, limiter.ErrNotFound) {
				t.Errorf("reset by the raw key: %v, want ErrNotFound", err)
			}
			if d, err := admin.Status(ctx, "per-key", id); err != nil || d.Results[0].Remaining != 2 {
				t.Errorf("status by the key's identity: %+v %v, want 2 remaining", d, err)
			}
			if err := admin.Block(ctx, "per-key", id, time.Hour); err != nil {
				t.Fatal(err)
			}
			if res := do(h, "GET", "/", "203.0.113.9:1", "X-API-Key", "the-raw-api-key"); res.StatusCode != 429 {
				t.Errorf("after the block: %d, want 429", res.StatusCode)
			}

			// Another process that restates the rule by hand, with another
			// algorithm: its reset reaches nothing, and says so.
			other := redis.NewClient(b.Client.Options())
			defer other.Close()
			restated, err := limiter.New(mwtest.RedisStore(t, other), []limiter.Rule{{Name: "per-key", Algorithm: algorithms.SlidingWindow{Limit: 3, Window: time.Hour}}}, prefix, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := restated.Unblock(ctx, "per-key", id); err != nil {
				t.Errorf("unblock: %v", err) // blocks do not depend on the algorithm
			}
			if err := restated.Reset(ctx, "per-key", id); !errors.Is(err, limiter.ErrNotFound) {
				t.Errorf("reset under another algorithm: %v, want ErrNotFound", err)
			}
			if err := admin.Reset(ctx, "per-key", id); err != nil {
				t.Errorf("reset by the middleware's rules: %v", err)
			}
		})
	}
}
