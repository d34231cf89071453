package grpclimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/client"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// A client through our interceptor gets the rate the server advertises,
// 2 calls a second, and is refused none: 8 sequential calls at 90% of it
// or more.
func TestClientPaces(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 2}}, Identity: grpclimit.Constant("client")}}
	var ev events
	c := &grpclimit.Client{}
	cc, _ := serve(t, newServer(t, onMemstore(), rules, grpclimit.WithHook(ev.hook)), tcp, grpc.WithUnaryInterceptor(c.UnaryClientInterceptor()))
	const n = 8
	start := time.Now()
	for i := range n {
		if _, err := call(cc, ""); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	rate := n / time.Since(start).Seconds()
	t.Logf("%d calls in %v: %.2f/s", n, time.Since(start).Round(time.Millisecond), rate)
	if got := ev.outcomes(); got["denied"] != 0 || got["allowed"] != n {
		t.Errorf("outcomes %v, want %d allowed and none denied", got, n)
	}
	if rate < 0.9*2 {
		t.Errorf("%.2f calls/s, under 90%% of the advertised 2/s", rate)
	}
}

// A call refused with a RetryInfo is sent again once its wait has passed;
// one whose wait is past MaxWait returns the server's refusal unchanged,
// and a call after it is not sent at all.
func TestClientRetries(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second, Anchored: true}}, Identity: grpclimit.Constant("client")}}
	var ev events
	s := newServer(t, onMemstore(), rules, grpclimit.WithHook(ev.hook))
	plain, _ := serve(t, s, pipe)
	if _, err := call(plain, ""); err != nil { // the window's only unit
		t.Fatal(err)
	}
	c := &grpclimit.Client{}
	cc, _ := serve(t, s, pipe, grpc.WithUnaryInterceptor(c.UnaryClientInterceptor()))
	if _, err := call(cc, ""); err != nil {
		t.Fatalf("a call refused, then retried: %v", err)
	}
	if got := ev.outcomes(); got["denied"] != 1 || got["allowed"] != 2 {
		t.Errorf("outcomes %v, want 2 allowed and 1 denied", got)
	}

	rules[0].Algorithm = algorithms.FixedWindow{Limit: 1, Window: time.Hour, Anchored: true} // anchored: no hour boundary refills it mid-test
	s = newServer(t, onMemstore(), rules)
	plain, _ = serve(t, s, pipe)
	if _, err := call(plain, ""); err != nil {
		t.Fatal(err)
	}
	c = &grpclimit.Client{MaxWait: 100 * time.Millisecond}
	cc, _ = serve(t, s, pipe, grpc.WithUnaryInterceptor(c.UnaryClientInterceptor()))
	_, err := call(cc, "")
	if ri, qf := details(err); status.Code(err) != codes.ResourceExhausted || ri == nil || len(qf.GetViolations()) != 1 {
		t.Fatalf("a call whose wait is past MaxWait: %v, want the server's refusal", err)
	}
	_, err = call(cc, "")
	if status.Code(err) != codes.ResourceExhausted || !errors.Is(err, client.ErrWaitTooLong) {
		t.Fatalf("a call its server is known to refuse: %v, want ErrWaitTooLong", err)
	}

	// The call's deadline bounds the wait as MaxWait does: the hour's wait
	// is within MaxWait, past the deadline.
	c = &grpclimit.Client{MaxWait: 2 * time.Hour}
	cc, _ = serve(t, s, pipe, grpc.WithUnaryInterceptor(c.UnaryClientInterceptor()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{})
	if ri, _ := details(err); status.Code(err) != codes.ResourceExhausted || ri == nil {
		t.Fatalf("a call whose wait is past its deadline: %v, want the server's refusal", err)
	}
}

// Streams through our stream interceptor: a stream refused when it opens
// is opened again once its wait has passed.
func TestClientReopensStreams(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "opens", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second, Anchored: true}}, Identity: grpclimit.Constant("client")}}
	var ev events
	s := newServer(t, onMemstore(), rules, grpclimit.WithHook(ev.hook))
	plain, _ := serve(t, s, pipe)
	if _, err := open(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	c := &grpclimit.Client{}
	cc, _ := serve(t, s, pipe, grpc.WithStreamInterceptor(c.StreamClientInterceptor()))
	st, err := open(context.Background(), cc)
	if err != nil {
		t.Fatalf("a stream refused, then opened again: %v", err)
	}
	closeStream(t, st)
	if got := ev.outcomes(); got["denied"] != 1 || got["allowed"] != 2 {
		t.Errorf("outcomes %v, want 2 allowed and 1 denied", got)
	}
}

// An independent client, go-grpc-middleware's retry interceptor told to
// retry ResourceExhausted, gets through once its backoff outlasts the
// server's wait.
func TestGoGRPCMiddlewareRetry(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 1}}, Identity: grpclimit.Constant("client")}}
	var ev events
	retrying := retry.UnaryClientInterceptor(retry.WithCodes(codes.ResourceExhausted), retry.WithMax(5),
		retry.WithBackoff(retry.BackoffLinear(150*time.Millisecond)))
	cc, _ := serve(t, newServer(t, onMemstore(), rules, grpclimit.WithHook(ev.hook)), tcp, grpc.WithUnaryInterceptor(retrying))
	c := testpb.NewTestServiceClient(cc)
	for i := range 2 {
		if _, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if got := ev.outcomes(); got["denied"] != 1 || got["allowed"] != 2 {
		t.Errorf("outcomes %v, want 2 allowed and the second call's first try denied", got)
	}
}

// A call refused with a RetryInfo of 250 ms is sent again 250 ms later:
// the wait as given, not rounded up to whole seconds as Retry-After's
// are. The server's limiter and the Client share a fake clock that only
// the Client's sleeps move.
func TestClientRetriesAfterRetryInfoAsGiven(t *testing.T) {
	clk := newFakeClock()
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: algorithms.GCRA{Rate: 4, Period: time.Second, Burst: 1}}, Identity: grpclimit.Constant("client")}}
	var ev events
	s := newServer(t, clk.onMemstore(), rules, grpclimit.WithHook(ev.hook))
	plain, _ := serve(t, s, pipe)
	if _, err := call(plain, ""); err != nil { // the only unit until 250 ms from now
		t.Fatal(err)
	}
	cc, _ := serve(t, s, pipe, grpc.WithUnaryInterceptor(clk.client().UnaryClientInterceptor()))
	start := clk.Now()
	if _, err := call(cc, ""); err != nil {
		t.Fatalf("a call refused, then retried: %v", err)
	}
	if got := ev.outcomes(); got["denied"] != 1 || got["allowed"] != 2 {
		t.Errorf("outcomes %v, want 2 allowed and 1 denied", got)
	}
	if waited := clk.Now().Sub(start); waited != 250*time.Millisecond {
		t.Errorf("the retry went after %v, want the RetryInfo's 250ms", waited)
	}
}

// A server's rule without methods spans them all: a client that
// alternates two methods is paced by the rule the ratelimit metadata
// names, not per method, and the server refuses none of its 17 calls,
// which reach at least 90% of the advertised 2 a second. The server's
// limiter and the Client share a fake clock that only the Client's
// sleeps move.
func TestClientPacesByRule(t *testing.T) {
	clk := newFakeClock()
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: algorithms.GCRA{Rate: 2, Period: time.Second, Burst: 2}}, Identity: grpclimit.Constant("client")}}
	var ev events
	cc, _ := serve(t, newServer(t, clk.onMemstore(), rules, grpclimit.WithHook(ev.hook)), pipe,
		grpc.WithUnaryInterceptor(clk.client().UnaryClientInterceptor()))
	c := testpb.NewTestServiceClient(cc)
	const n = 17
	start := clk.Now()
	for i := range n {
		var err error
		if i%2 == 0 {
			_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		} else {
			_, err = c.EmptyCall(context.Background(), &testpb.Empty{})
		}
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	elapsed := clk.Now().Sub(start)
	rate := n / elapsed.Seconds()
	t.Logf("%d calls in %v: %.2f/s", n, elapsed, rate)
	if got := ev.outcomes(); got["denied"] != 0 || got["allowed"] != n {
		t.Errorf("outcomes %v, want %d allowed and none denied", got, n)
	}
	if rate < 0.9*2 {
		t.Errorf("%.2f calls/s, under 90%% of the advertised 2/s", rate)
	}
}

// A call whose deadline has passed before it is sent fails with
// DeadlineExceeded, as gRPC fails it, not as one its server is known to
// refuse: nothing holds it.
func TestClientCallPastItsDeadline(t *testing.T) {
	cc, err := grpc.NewClient("passthrough:///nowhere", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	c := &grpclimit.Client{}
	sent := false
	err = c.UnaryClientInterceptor()(ctx, unaryCall, nil, nil, cc, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		sent = true
		return status.FromContextError(ctx.Err()).Err()
	})
	if status.Code(err) != codes.DeadlineExceeded || errors.Is(err, client.ErrWaitTooLong) {
		t.Fatalf("a call past its deadline: %v (sent %v), want DeadlineExceeded", err, sent)
	}
}
