package grpclimit_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// events collects a Server's hook events.
type events struct {
	mu  sync.Mutex
	all []guard.Event
}

func (e *events) hook(ev guard.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// outcomes counts the events by outcome.
func (e *events) outcomes() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := make(map[string]int)
	for _, ev := range e.all {
		n[ev.Outcome]++
	}
	return n
}

func (e *events) last() guard.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.all[len(e.all)-1]
}

// call makes a UnaryCall with the API key, and returns its error and the
// response header metadata.
func call(cc *grpc.ClientConn, key string) (metadata.MD, error) {
	ctx := context.Background()
	if key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-api-key", key)
	}
	var header metadata.MD
	_, err := testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.Header(&header))
	return header, err
}

// A per-key and a global rule are one stack: a call refused by the
// per-key rule consumes nothing of the global one, so that another key
// still gets the global rule's whole remaining quota. Every call carries
// the ratelimit metadata, the refused ones too; a refusal is
// ResourceExhausted with a RetryInfo no shorter than the decision's wait
// and a QuotaFailure naming the rule.
func TestStackedRules(t *testing.T) {
	for _, b := range backends() {
		for _, tr := range []transport{tcp, pipe} {
			t.Run(b.name+"/"+string(tr), func(t *testing.T) {
				rules := []grpclimit.Rule{
					{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}, Identity: grpclimit.Metadata("x-api-key")},
					{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Hour}}, Identity: grpclimit.Constant("all")},
				}
				var ev events
				cc, _ := serve(t, newServer(t, b.on(t), rules, grpclimit.WithHook(ev.hook)), tr)
				for i := range 3 {
					md, err := call(cc, "alice")
					if err != nil {
						t.Fatalf("alice's call %d: %v", i+1, err)
					}
					if got := md.Get("ratelimit-policy"); len(got) != 1 || got[0] != `"per-key";q=3;w=3600, "global";q=5;w=3600` {
						t.Errorf("ratelimit-policy %q", got)
					}
				}
				md, err := call(cc, "alice")
				if status.Code(err) != codes.ResourceExhausted {
					t.Fatalf("alice's 4th call: %v, want ResourceExhausted", err)
				}
				if got := md.Get("ratelimit"); len(got) != 1 || !strings.HasPrefix(got[0], `"per-key";r=0;t=`) || !strings.Contains(got[0], `"global";r=2`) {
					t.Errorf("refusal's ratelimit %q", got)
				}
				ri, qf := details(err)
				wait := ev.last().Decision.RetryAfter()
				if ri == nil || ri.GetRetryDelay().AsDuration() < wait || ri.GetRetryDelay().AsDuration() <= 0 {
					t.Errorf("RetryInfo %v, want at least the decision's %v", ri, wait)
				}
				if got := violated(qf); !slices.Equal(got, []string{"per-key"}) {
					t.Errorf("QuotaFailure names %q, want per-key", got)
				}
				for i := range 2 {
					if _, err := call(cc, "bob"); err != nil {
						t.Fatalf("bob's call %d: %v (alice's refusal consumed the global rule?)", i+1, err)
					}
				}
				_, err = call(cc, "carol")
				if _, qf := details(err); !slices.Equal(violated(qf), []string{"global"}) {
					t.Errorf("carol's call: %v, want refused by global", err)
				}
				if got, want := ev.outcomes(), map[string]int{"allowed": 5, "denied": 2}; !maps.Equal(got, want) {
					t.Errorf("hook outcomes %v, want %v", got, want)
				}
				if got := ev.last().Route; got != unaryCall {
					t.Errorf("the hook's route %q, want %q", got, unaryCall)
				}
			})
		}
	}
}

// Rules apply to their methods; health checks are exempt unless
// WithExemptMethods says otherwise.
func TestMethodsAndExemptions(t *testing.T) {
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "unary", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}, Identity: grpclimit.Constant("all")},
		{Rule: limiter.Rule{Name: "service", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}}, Identity: grpclimit.Constant("all")},
	}
	methods := []grpclimit.Option{grpclimit.WithMethods("unary", unaryCall),
		grpclimit.WithMethods("service", "/grpc.testing.TestService/*", "/grpc.health.v1.Health/Check")}
	for _, tc := range []struct {
		name          string
		opts          []grpclimit.Option
		healthRefused int // of 3 checks, once the service's rule has 1 unit left
	}{
		{"default", nil, 0},
		{"another exempt", []grpclimit.Option{grpclimit.WithExemptMethods(emptyCall)}, 0},
		{"none exempt", []grpclimit.Option{grpclimit.WithoutDefaultExemptions()}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, onMemstore(), rules, append(methods, tc.opts...)...)
			srv := grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor()))
			testpb.RegisterTestServiceServer(srv, &echo{})
			healthpb.RegisterHealthServer(srv, health.NewServer())
			cc := serveOn(t, srv)
			tc2 := testpb.NewTestServiceClient(cc)
			hc := healthpb.NewHealthClient(cc)
			ctx := context.Background()
			if _, err := tc2.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
				t.Fatal(err)
			}
			if _, err := tc2.UnaryCall(ctx, &testpb.SimpleRequest{}); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("second UnaryCall: %v, want refused by unary", err)
			}
			if _, err := tc2.EmptyCall(ctx, &testpb.Empty{}); err != nil {
				t.Fatalf("EmptyCall, under the service's rule only: %v", err)
			}
			refused := 0
			for range 3 {
				_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
				switch status.Code(err) {
				case codes.ResourceExhausted:
					refused++
				case codes.OK:
				default:
					t.Fatalf("health check: %v", err)
				}
			}
			if refused != tc.healthRefused {
				t.Errorf("%d health checks of 3 refused, want %d", refused, tc.healthRefused)
			}
		})
	}
}

// The default exempt methods cannot be changed from outside: a caller
// that overwrites what DefaultExemptMethods gives it leaves a Server's
// defaults, and the next caller's, as they were.
func TestDefaultExemptMethodsUnchangeable(t *testing.T) {
	want := grpclimit.DefaultExemptMethods()
	d := grpclimit.DefaultExemptMethods()
	d[0] = "/grpc.testing.TestService/*"
	if got := grpclimit.DefaultExemptMethods(); !slices.Equal(got, want) {
		t.Errorf("DefaultExemptMethods %q after a caller's change, want %q", got, want)
	}
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "all", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}, Identity: grpclimit.Constant("all")}}
	s := newServer(t, onMemstore(), rules)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor()))
	testpb.RegisterTestServiceServer(srv, &echo{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	cc := serveOn(t, srv)
	for i := range 2 {
		if _, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("health check %d: %v, want exempt", i+1, err)
		}
	}
	for i, want := range []codes.Code{codes.OK, codes.ResourceExhausted} {
		if _, err := call(cc, ""); status.Code(err) != want {
			t.Fatalf("call %d: %v, want %v", i+1, err, want)
		}
	}
}

// serveOn serves srv on a loopback port and returns a connection to it.
func serveOn(t *testing.T, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// A call without an identity is refused with Unauthenticated, unless the
// rule is optional; a negative cost is InvalidArgument. The statuses
// name no identity and no error text.
func TestIdentityAndCost(t *testing.T) {
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}, Identity: grpclimit.Metadata("x-api-key")},
	}
	cc, _ := serve(t, newServer(t, onMemstore(), rules), pipe)
	if _, err := call(cc, ""); status.Code(err) != codes.Unauthenticated {
		t.Errorf("call without a key: %v, want Unauthenticated", err)
	}
	rules[0].Optional = true
	cc, _ = serve(t, newServer(t, onMemstore(), rules), pipe)
	if md, err := call(cc, ""); err != nil || md.Get("ratelimit") != nil {
		t.Errorf("call without a key, optional rule: %v, metadata %v; want through, unlimited", err, md)
	}
	rules[0].Cost = func(*grpclimit.Call) int { return -1 }
	cc, _ = serve(t, newServer(t, onMemstore(), rules), pipe)
	if _, err := call(cc, "secret-key"); status.Code(err) != codes.InvalidArgument || strings.Contains(err.Error(), "secret") {
		t.Errorf("negative cost: %v, want InvalidArgument", err)
	}
}

// Invalid rules fail at construction, naming the rule; so does an option
// given twice for one rule, whose second would replace the first.
func TestInvalidRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule grpclimit.Rule
		opts []grpclimit.Option
	}{
		{"method", grpclimit.Rule{Rule: limiter.Rule{Name: "bad-method"}}, []grpclimit.Option{grpclimit.WithMethods("bad-method", "pkg.Service/M")}},
		{"wildcard", grpclimit.Rule{Rule: limiter.Rule{Name: "bad-wildcard"}}, []grpclimit.Option{grpclimit.WithMethods("bad-wildcard", "/pkg.Service/Get*")}},
		{"message cost on slots", grpclimit.Rule{Rule: limiter.Rule{Name: "slots", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Minute}}},
			[]grpclimit.Option{grpclimit.WithMessageCost("slots", func(*grpclimit.Call, any) int { return 1 })}},
		{"an option naming no rule", grpclimit.Rule{Rule: limiter.Rule{Name: "unnamed"}}, []grpclimit.Option{grpclimit.WithMethods("unnamed-too", unaryCall)}},
		{"methods given twice", grpclimit.Rule{Rule: limiter.Rule{Name: "twice"}},
			[]grpclimit.Option{grpclimit.WithMethods("twice", unaryCall), grpclimit.WithMethods("twice", "/pkg.Other/*")}},
		{"message cost given twice", grpclimit.Rule{Rule: limiter.Rule{Name: "twice"}}, []grpclimit.Option{
			grpclimit.WithMessageCost("twice", func(*grpclimit.Call, any) int { return 1 }),
			grpclimit.WithMessageCost("twice", func(*grpclimit.Call, any) int { return 2 })}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rule.Identity = grpclimit.Constant("all")
			if tc.rule.Algorithm == nil {
				tc.rule.Algorithm = algorithms.FixedWindow{Limit: 1, Window: time.Second}
			}
			rules := []grpclimit.Rule{tc.rule}
			lim, err := limiter.New(memstore.Must(), guard.Limits(rules))
			if err != nil {
				t.Fatal(err)
			}
			_, err = grpclimit.NewWithLimiter(lim, rules, tc.opts...)
			if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.rule.Name) {
				t.Errorf("New: %v, want an ErrConfig naming %q", err, tc.rule.Name)
			}
		})
	}
}

// Settle charges a call its final cost from its code: a rule that counts
// failed calls only lets successes through without end.
func TestSettleByCode(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "failures", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}}, Identity: grpclimit.Constant("all"),
		Settle: func(_ *grpclimit.Call, end guard.End) int {
			if codes.Code(end.Status) == codes.OK {
				return 0
			}
			return 1
		}}}
	cc, _ := serve(t, newServer(t, onMemstore(), rules), pipe)
	c := testpb.NewTestServiceClient(cc)
	for i := range 5 {
		if _, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{}); err != nil {
			t.Fatalf("successful call %d: %v", i+1, err)
		}
	}
	for i := range 2 {
		if _, err := c.UnimplementedCall(context.Background(), &testpb.Empty{}); status.Code(err) != codes.Unimplemented {
			t.Fatalf("failing call %d: %v", i+1, err)
		}
	}
	if _, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("after 2 failures: %v, want ResourceExhausted", err)
	}
}

// A handler that panics settles with codes.Unknown, the code of a call
// that did not return, not codes.OK: a rule that counts failures counts
// it. A recovery interceptor, outside the Server's, turns the panic into
// the call's status.
func TestSettleAfterPanic(t *testing.T) {
	var mu sync.Mutex
	var settled []codes.Code
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "failures", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}, Identity: grpclimit.Constant("all"),
		Settle: func(_ *grpclimit.Call, end guard.End) int {
			mu.Lock()
			defer mu.Unlock()
			settled = append(settled, codes.Code(end.Status))
			return 1
		}}}
	s := newServer(t, onMemstore(), rules)
	recovered := recovery.WithRecoveryHandler(func(any) error { return status.Error(codes.Internal, "the handler panicked") })
	panicking := func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
		panic("stream handler")
	}
	cc := serveWith(t,
		grpc.ChainUnaryInterceptor(recovery.UnaryServerInterceptor(recovered), s.UnaryServerInterceptor(),
			func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
				panic("unary handler")
			}),
		grpc.ChainStreamInterceptor(recovery.StreamServerInterceptor(recovered), s.StreamServerInterceptor(), panicking))
	if _, err := call(cc, ""); status.Code(err) != codes.Internal {
		t.Fatalf("unary call: %v, want Internal from the recovery interceptor", err)
	}
	if _, err := open(context.Background(), cc); status.Code(err) != codes.Internal {
		t.Fatalf("stream: %v, want Internal from the recovery interceptor", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := settled, []codes.Code{codes.Unknown, codes.Unknown}; !slices.Equal(got, want) {
		t.Errorf("Settle saw %v, want %v", got, want)
	}
}

// A cost no wait can admit is refused without a RetryInfo, so that no
// client retries it; a blocked client's refusal says so, with the
// block's wait.
func TestRefusalKinds(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Minute}, Blockable: true}, Identity: grpclimit.Metadata("x-api-key"),
		Cost: func(c *grpclimit.Call) int { return len(c.Metadata("x-api-key")[0]) }}}
	lim, err := limiter.New(memstore.Must(), guard.Limits(rules))
	if err != nil {
		t.Fatal(err)
	}
	s, err := grpclimit.NewWithLimiter(lim, rules)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := serve(t, s, pipe)
	_, err = call(cc, "abc") // cost 3 > 2
	if ri, qf := details(err); status.Code(err) != codes.ResourceExhausted || ri != nil || !slices.Equal(violated(qf), []string{"per-key"}) {
		t.Errorf("a cost above the limit: %v, RetryInfo %v; want ResourceExhausted without RetryInfo", err, ri)
	}
	// The operator's identity of a key: its hash, as Metadata hashes it.
	id := keyfunc.Hash("a")
	if err := lim.Block(context.Background(), "per-key", id, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = call(cc, "a")
	ri, qf := details(err)
	if status.Code(err) != codes.ResourceExhausted || ri.GetRetryDelay().AsDuration() < 59*time.Minute ||
		!strings.Contains(status.Convert(err).Message(), "blocked") || qf.GetViolations()[0].GetDescription() != "client blocked" {
		t.Errorf("a blocked client: %v, RetryInfo %v, QuotaFailure %v", err, ri, qf)
	}
}

// Shadow mode decides and reports, and refuses nothing.
func TestShadowMode(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}, Identity: grpclimit.Constant("all")}}
	var ev events
	cc, _ := serve(t, newServer(t, onMemstore(), rules, grpclimit.WithShadowMode(), grpclimit.WithHook(ev.hook)), pipe)
	for i := range 2 {
		if _, err := call(cc, ""); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if got := ev.outcomes(); got["allowed"] != 1 || got["shadow_allowed"] != 1 {
		t.Errorf("outcomes %v, want 1 allowed and 1 shadow_allowed", got)
	}
}

// A shadow rule is decided and reported but never refuses: a call only
// it would refuse goes through, the hook seeing its would-be refusal
// ("would_deny"); a call an enforced rule refuses names that rule
// alone, in its QuotaFailure and its message.
func TestShadowRule(t *testing.T) {
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "enforced", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}, Identity: grpclimit.Metadata("x-api-key")},
		{Rule: limiter.Rule{Name: "trial", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}, Shadow: true}, Identity: grpclimit.Constant("all")},
	}
	var ev events
	cc, _ := serve(t, newServer(t, onMemstore(), rules, grpclimit.WithHook(ev.hook)), pipe)
	if _, err := call(cc, "alice"); err != nil {
		t.Fatalf("alice's first call: %v", err)
	}
	md, err := call(cc, "bob")
	if err != nil {
		t.Fatalf("bob's call, refused by the shadow rule only: %v, want admitted", err)
	}
	if got := md.Get("ratelimit-policy"); len(got) != 1 || strings.Contains(got[0], "trial") {
		t.Errorf("ratelimit-policy %q, want the enforced rule's only", got)
	}
	e := ev.last()
	if got, want := []string{e.Outcome, e.RuleOutcome(0), e.RuleOutcome(1)}, []string{"allowed", "allowed", "would_deny"}; !slices.Equal(got, want) {
		t.Errorf("bob's call: outcome and rule outcomes %q, want %q", got, want)
	}
	_, err = call(cc, "alice")
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("alice's second call: %v, want ResourceExhausted", err)
	}
	if _, qf := details(err); !slices.Equal(violated(qf), []string{"enforced"}) {
		t.Errorf("QuotaFailure names %q, want enforced only", violated(qf))
	}
	if msg := status.Convert(err).Message(); strings.Contains(msg, "trial") {
		t.Errorf("refusal %q names the shadow rule", msg)
	}
	if e := ev.last(); e.RuleOutcome(1) != "would_deny" {
		t.Errorf("alice's refusal: the shadow rule's outcome %q, want would_deny", e.RuleOutcome(1))
	}
}

// WithoutMetadata sends no ratelimit metadata, on an admitted call or a
// refused one, unary or streaming; a refusal still carries its RetryInfo
// and QuotaFailure.
func TestWithoutMetadata(t *testing.T) {
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}},
		Identity: grpclimit.Metadata("x-api-key")}}
	cc, _ := serve(t, newServer(t, onMemstore(), rules, grpclimit.WithoutMetadata()), pipe)
	for i := range 3 {
		md, err := call(cc, "alice")
		if i < 2 && err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if got := append(md.Get("ratelimit"), md.Get("ratelimit-policy")...); len(got) > 0 {
			t.Errorf("call %d sent ratelimit metadata %q", i+1, got)
		}
		if i == 2 {
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("call 3: %v, want ResourceExhausted", err)
			}
			if ri, qf := details(err); ri == nil || qf == nil {
				t.Errorf("refusal without metadata: RetryInfo %v, QuotaFailure %v, want both", ri, qf)
			}
		}
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "bob")
	s, err := testpb.NewTestServiceClient(cc).FullDuplexCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	md, err := s.Header()
	if err != nil {
		t.Fatalf("stream header: %v", err)
	}
	if got := append(md.Get("ratelimit"), md.Get("ratelimit-policy")...); len(got) > 0 {
		t.Errorf("stream sent ratelimit metadata %q", got)
	}
	_ = s.CloseSend()
}

// A handler that returns a context's error ends its call with the code
// gRPC sends for it, Canceled or DeadlineExceeded, and Settle is told
// that code, not Unknown, the code of a panic.
func TestSettleByContextError(t *testing.T) {
	settled := make(chan codes.Code, 2)
	rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "calls", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}, Identity: grpclimit.Constant("all"),
		Settle: func(_ *grpclimit.Call, end guard.End) int { settled <- codes.Code(end.Status); return 1 }}}
	s := newServer(t, onMemstore(), rules)
	cc := serveWith(t,
		grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor(), func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
			return nil, context.Canceled
		}),
		grpc.ChainStreamInterceptor(s.StreamServerInterceptor(), func(any, grpc.ServerStream, *grpc.StreamServerInfo, grpc.StreamHandler) error {
			return fmt.Errorf("stream: %w", context.DeadlineExceeded)
		}))
	if _, err := call(cc, ""); status.Code(err) != codes.Canceled {
		t.Fatalf("unary call: %v, want Canceled", err)
	}
	if got := <-settled; got != codes.Canceled {
		t.Errorf("unary call: Settle saw %v, want Canceled", got)
	}
	if _, err := open(context.Background(), cc); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("stream: %v, want DeadlineExceeded", err)
	}
	if got := <-settled; got != codes.DeadlineExceeded {
		t.Errorf("stream: Settle saw %v, want DeadlineExceeded", got)
	}
}
