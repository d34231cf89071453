package grpclimit_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
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

// hangingStore decides nothing until the call's context ends, as a Redis
// slower than the client's deadline would.
type hangingStore struct{ store.Store }

func (hangingStore) Decide(ctx context.Context, _ time.Time, _ []store.Check, _ []store.Result) (store.Verdict, error) {
	<-ctx.Done()
	return store.Verdict{}, ctx.Err()
}

// A call whose deadline passes while it is decided is the client giving
// up, not a failure of Redis, under either policy: DeadlineExceeded,
// nothing for the error handler, and the hook's outcome canceled with no
// backend state. (The server's context ends by the client's cancellation
// or by its own deadline, whichever comes first; both are the client's.)
func TestClientDeadlineIsNotABackendFailure(t *testing.T) {
	for _, closed := range []bool{false, true} {
		rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: grpclimit.Metadata("x-api-key")}}
		events := make(chan guard.Event, 1)
		var handled atomic.Int32
		opts := []grpclimit.Option{grpclimit.WithHook(func(e guard.Event) { events <- e }),
			grpclimit.WithErrorHandler(func(context.Context, string, error) { handled.Add(1) })}
		if closed {
			opts = append(opts, grpclimit.WithFailClosed())
		}
		on := func(rules []limiter.Rule) (*limiter.Limiter, error) {
			return limiter.New(hangingStore{memstore.Must()}, rules)
		}
		cc, _ := serve(t, newServer(t, on, rules, opts...), pipe)
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "k"), 50*time.Millisecond)
		_, err := testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{})
		cancel()
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("closed %v: %v, want DeadlineExceeded", closed, err)
		}
		// The server ends the call on its side of the deadline, after the
		// client has given up.
		select {
		case e := <-events:
			if e.Outcome != "canceled" || e.Backend != "" {
				t.Errorf("closed %v: hook outcome %q, backend %q; want canceled, none", closed, e.Outcome, e.Backend)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("closed %v: no hook event", closed)
		}
		if n := handled.Load(); n != 0 {
			t.Errorf("closed %v: the error handler saw %d errors, want none", closed, n)
		}
	}
}

// A call whose deadline has passed while its context's timer has not yet
// ended it (ctx.Err() still nil), and whose decision failed with the
// deadline's error, is DeadlineExceeded: its handler does not run
// undecided.
func TestDeadlinePassedBeforeItsTimer(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "all", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: grpclimit.Constant("c")}}
	on := func(rules []limiter.Rule) (*limiter.Limiter, error) {
		return limiter.New(expiredStore{memstore.Must()}, rules)
	}
	s := newServer(t, on, rules, grpclimit.WithErrorHandler(func(context.Context, string, error) {}))
	ctx := expired{context.Background()}
	ran := false
	_, err := s.UnaryServerInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: unaryCall}, func(context.Context, any) (any, error) {
		ran = true
		return nil, nil
	})
	if ran || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("handler ran %v, status %v; want not run, DeadlineExceeded", ran, err)
	}
	err = s.StreamServerInterceptor()(nil, &expiredStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: duplexCall}, func(any, grpc.ServerStream) error {
		ran = true
		return nil
	})
	if ran || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("stream: handler ran %v, status %v; want not run, DeadlineExceeded", ran, err)
	}
}

// expired is a context whose deadline has passed and whose timer has not
// fired yet.
type expired struct{ context.Context }

func (expired) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// expiredStore fails as a store does past its caller's deadline.
type expiredStore struct{ store.Store }

func (expiredStore) Decide(context.Context, time.Time, []store.Check, []store.Result) (store.Verdict, error) {
	return store.Verdict{}, context.DeadlineExceeded
}

// expiredStream is a server stream on ctx that sends nothing.
type expiredStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *expiredStream) Context() context.Context   { return s.ctx }
func (*expiredStream) SetTrailer(metadata.MD)       {}
func (*expiredStream) SendHeader(metadata.MD) error { return nil }
