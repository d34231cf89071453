package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A request whose deadline passes while a paused redis-server keeps its
// decision (the store's timeout much longer) is the client's end, under
// either failure policy and with coalescing on or off: not served, nothing
// logged, the hook's outcome canceled with the deadline's error. The call's
// socket stops at the request's deadline, so its failure can be a network
// timeout a moment before the context's own timer ends it.
func TestRequestDeadlineOnPausedRedis(t *testing.T) {
	s := redistest.Start(t)
	rec := logtest.Capture(t)
	for _, closed := range []bool{false, true} {
		for _, coalesce := range []bool{true, false} {
			rec.Reset()
			var events []guard.Event
			opts := stack{
				Store: []redisstore.Option{redisstore.WithTimeout(10 * time.Second), redisstore.WithCoalescing(coalesce)},
				Lim:   []limiter.Option{limiter.WithDenyCache(0, 0)},
				MW:    []middleware.Option{middleware.WithHook(func(e guard.Event) { events = append(events, e) })},
			}
			if closed {
				opts.MW = append(opts.MW, middleware.WithFailClosed())
			}
			served := false
			h := limit(t, s.Client, []middleware.Rule{perIP(10)}, opts)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // the library is loaded
			events, served = nil, false
			if err := s.Client.Do(context.Background(), "CLIENT", "PAUSE", 400, "ALL").Err(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			cancel()
			name := map[bool]string{false: "fail open", true: "fail closed"}[closed] + map[bool]string{true: ", coalescing", false: ""}[coalesce]
			if served || len(rec.Records()) != 0 || len(events) != 1 {
				t.Fatalf("%s: served %v, logged %v, %d events; want not served, nothing logged, 1 event", name, served, rec.Records(), len(events))
			}
			if e := events[0]; e.Outcome != guard.Canceled.String() || !errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, limiter.ErrBackend) {
				t.Errorf("%s: outcome %q, error %v; want canceled, the deadline's error, no backend failure", name, e.Outcome, e.Err)
			}
			time.Sleep(400 * time.Millisecond) // the pause ends
		}
	}
}
