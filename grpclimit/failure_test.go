package grpclimit_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// With Redis killed, a call goes through without the ratelimit metadata
// (fail open), or is refused with Unavailable and a RetryInfo of 1 s
// (WithFailClosed); either way the status carries no error text, and the
// hook and the error handler see the failure.
func TestRedisKilled(t *testing.T) {
	for _, redis := range []struct {
		name  string
		start func(t *testing.T) (addr string, kill func())
	}{
		{"miniredis", func(t *testing.T) (string, func()) { m := miniredis.RunT(t); return m.Addr(), m.Close }},
		{"redis-server", func(t *testing.T) (string, func()) { s := startRedis(t); return s.addr, s.stop }},
	} {
		for _, closed := range []bool{false, true} {
			name := redis.name + "/open"
			if closed {
				name = redis.name + "/closed"
			}
			t.Run(name, func(t *testing.T) {
				addr, kill := redis.start(t)
				rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: grpclimit.Metadata("x-api-key")}}
				var ev events
				var mu sync.Mutex
				var handled []error
				opts := []grpclimit.Option{grpclimit.WithHook(ev.hook),
					grpclimit.WithErrorHandler(func(_ context.Context, _ string, err error) {
						mu.Lock()
						defer mu.Unlock()
						handled = append(handled, err)
					})}
				if closed {
					opts = append(opts, grpclimit.WithFailClosed())
				}
				cc, _ := serve(t, newServer(t, onRedis(t, addr), rules, opts...), pipe)
				if md, err := call(cc, "key"); err != nil || md.Get("ratelimit") == nil {
					t.Fatalf("call with Redis up: %v, metadata %v", err, md)
				}
				kill()
				md, err := call(cc, "key")
				switch {
				case !closed && (err != nil || md.Get("ratelimit") != nil):
					t.Errorf("failing open: %v, metadata %v; want through without it", err, md)
				case closed && status.Code(err) != codes.Unavailable:
					t.Errorf("failing closed: %v, want Unavailable", err)
				case closed:
					if ri, _ := details(err); ri.GetRetryDelay().AsDuration() != time.Second {
						t.Errorf("failing closed: RetryInfo %v, want 1 s", ri)
					}
					if msg := status.Convert(err).Message(); strings.Contains(msg, addr) || strings.Contains(msg, "dial") || strings.Contains(msg, "connect") {
						t.Errorf("the status tells the backend's error: %q", msg)
					}
				}
				if got := ev.last(); got.Outcome != "error" || got.Backend != "down" {
					t.Errorf("hook: outcome %q, backend %q; want error, down", got.Outcome, got.Backend)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(handled) != 1 {
					t.Errorf("the error handler saw %d errors, want 1", len(handled))
				}
			})
		}
	}
}

// A stream that the limiter failed to decide opens when failing open, also
// through the client's stream interceptor (its response headers come
// without the ratelimit metadata), and is refused with Unavailable when
// failing closed.
func TestStreamRedisKilled(t *testing.T) {
	for _, closed := range []bool{false, true} {
		m := miniredis.RunT(t)
		rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "streams", Algorithm: algorithms.Concurrency{Limit: 2, TTL: time.Minute}}, Identity: grpclimit.Constant("client")}}
		var opts []grpclimit.Option
		if closed {
			opts = append(opts, grpclimit.WithFailClosed())
		}
		var c grpclimit.Client
		cc, _ := serve(t, newServer(t, onRedis(t, m.Addr()), rules, opts...), pipe, grpc.WithStreamInterceptor(c.StreamClientInterceptor()))
		m.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := open(ctx, cc)
		switch {
		case !closed && err != nil:
			t.Errorf("failing open: %v", err)
		case !closed:
			closeStream(t, s)
		case status.Code(err) != codes.Unavailable:
			t.Errorf("failing closed: %v, want Unavailable", err)
		}
		cancel()
	}
}
