package grpclimit_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

type duplex = grpc.BidiStreamingClient[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]

// open opens a FullDuplexCall and waits until the server admits or
// refuses it: admitted, it answers its first message.
func open(ctx context.Context, cc *grpc.ClientConn) (duplex, error) {
	s, err := testpb.NewTestServiceClient(cc).FullDuplexCall(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Send(&testpb.StreamingOutputCallRequest{}); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if _, err := s.Recv(); err != nil {
		return nil, err
	}
	return s, nil
}

// closeStream ends s from the client's side and waits for the server's
// end of it: the handler has returned and the call is settled.
func closeStream(t *testing.T, s duplex) {
	t.Helper()
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("stream's end: %v", err)
	}
}

// A concurrency rule holds a slot per open stream: of 64 streams opened
// at once by one client, exactly Limit open, the others are refused with
// a RetryInfo of at most 1 s (a slot frees when any stream ends, long
// before the slots' TTL), and no more handlers than Limit ever run at
// once. A slot
// comes back when its stream ends, and when its client cancels it.
func TestOpenStreams(t *testing.T) {
	const limit = 3
	for _, b := range backends() {
		for _, tr := range []transport{tcp, pipe} {
			t.Run(b.name+"/"+string(tr), func(t *testing.T) {
				rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "streams", Algorithm: algorithms.Concurrency{Limit: limit, TTL: time.Minute}}, Identity: grpclimit.Constant("client")}}
				duplexOnly := grpclimit.WithMethods("streams", duplexCall)
				// Failing closed: a decision the store did not make refuses
				// rather than admits.
				cc, svc := serve(t, newServer(t, b.on(t), rules, grpclimit.WithFailClosed(), duplexOnly), tr)
				ctx, cancelAll := context.WithCancel(context.Background())
				defer cancelAll()
				var mu sync.Mutex
				var opened []duplex
				var wg sync.WaitGroup
				refused := 0
				for range 64 {
					wg.Go(func() {
						s, err := open(ctx, cc)
						mu.Lock()
						defer mu.Unlock()
						switch ri, _ := details(err); {
						case err == nil:
							opened = append(opened, s)
						case status.Code(err) == codes.ResourceExhausted && ri.GetRetryDelay().AsDuration() > 0 &&
							ri.GetRetryDelay().AsDuration() <= time.Second: // a slot's wait, not its TTL (WithConcurrencyRetryAfter)
							refused++
						default:
							t.Errorf("open: %v", err)
						}
					})
				}
				wg.Wait()
				if len(opened) != limit || refused != 64-limit {
					t.Fatalf("%d streams open, %d refused; want %d and %d", len(opened), refused, limit, 64-limit)
				}
				if p := svc.peak.Load(); p > limit {
					t.Fatalf("%d handlers ran at once, more than %d", p, limit)
				}
				if _, err := open(ctx, cc); status.Code(err) != codes.ResourceExhausted {
					t.Fatalf("a 4th stream: %v, want refused", err)
				}

				closeStream(t, opened[0])
				s, err := open(ctx, cc)
				if err != nil {
					t.Fatalf("a stream after one ended: %v", err)
				}
				opened[0] = s

				// A client that cancels: its handler's context ends, and the
				// slot comes back once the server has seen it.
				cctx, cancel := context.WithCancel(ctx)
				closeStream(t, opened[1])
				if opened[1], err = open(cctx, cc); err != nil {
					t.Fatal(err)
				}
				cancel()
				if err := reopen(ctx, cc); err != nil {
					t.Fatalf("no slot came back after a client cancelled: %v", err)
				}
			})
		}
	}
}

// reopen opens a stream until one is admitted, for up to 5 s: the
// server learns of a cancellation after the client.
func reopen(ctx context.Context, cc *grpc.ClientConn) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := open(ctx, cc)
		if err == nil || status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A MessageCost charges each message a stream receives: with 3 units and
// none charged at open, the 4th message is refused, which ends the
// stream with the refusal.
func TestMessageCost(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "messages", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}, Identity: grpclimit.Constant("client"),
		Cost: func(*grpclimit.Call) int { return 0 }}}
	perMessage := grpclimit.WithMessageCost("messages", func(*grpclimit.Call, any) int { return 1 })
	cc, _ := serve(t, newServer(t, onMemstore(), rules, perMessage), pipe)
	s, err := testpb.NewTestServiceClient(cc).FullDuplexCall(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Send(&testpb.StreamingOutputCallRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	_ = s.Send(&testpb.StreamingOutputCallRequest{})
	_, err = s.Recv()
	if ri, qf := details(err); status.Code(err) != codes.ResourceExhausted || ri == nil || len(qf.GetViolations()) != 1 {
		t.Fatalf("4th message: %v, want ResourceExhausted with RetryInfo and QuotaFailure", err)
	}
}

// A Plan that chooses a limit of calls in flight for a rule with a
// message cost: each message's slot goes back once the message is
// decided, so streams after the limit's number still go through.
func TestMessageCostReleasesPlannedSlots(t *testing.T) {
	slots := algorithms.Concurrency{Limit: 2, TTL: time.Hour}
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "messages", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}},
		Identity: grpclimit.Constant("client"), Plan: func(*grpclimit.Call) algorithms.Algorithm { return slots },
		Cost: func(*grpclimit.Call) int { return 0 }}}
	cc, _ := serve(t, newServer(t, onMemstore(), rules,
		grpclimit.WithMessageCost("messages", func(*grpclimit.Call, any) int { return 1 })), pipe)
	for i := range 3 {
		s, err := testpb.NewTestServiceClient(cc).FullDuplexCall(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&testpb.StreamingOutputCallRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatalf("stream %d: %v, want its message answered (no slot held by earlier messages)", i+1, err)
		}
		_ = s.CloseSend()
		for err == nil {
			_, err = s.Recv()
		}
	}
}
