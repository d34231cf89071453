package grpclimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// callWith makes a UnaryCall with the metadata pairs and reports whether
// it was refused.
func callWith(t *testing.T, cc *grpc.ClientConn, pairs ...string) bool {
	t.Helper()
	ctx := metadata.AppendToOutgoingContext(context.Background(), pairs...)
	_, err := testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{})
	if err != nil && status.Code(err) != codes.ResourceExhausted {
		t.Fatal(err)
	}
	return err != nil
}

// Identities: the peer, or behind a trusted gateway the address it
// forwards in x-forwarded-for (from that peer only); a metadata value,
// hashed before it reaches Redis; the full method.
func TestIdentities(t *testing.T) {
	one := algorithms.FixedWindow{Limit: 1, Window: time.Hour}
	trusted, err := grpclimit.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("gateway", func(t *testing.T) {
		cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: one}, Identity: trusted}}), tcp)
		if callWith(t, cc, "x-forwarded-for", "192.0.2.1") || callWith(t, cc, "x-forwarded-for", "192.0.2.2") {
			t.Fatal("two forwarded clients share a limit")
		}
		if !callWith(t, cc, "x-forwarded-for", "192.0.2.1") {
			t.Fatal("a forwarded client's second call went through")
		}
	})
	t.Run("gateway naming its field", func(t *testing.T) {
		// The gateway sets x-real-ip and passes x-forwarded-for through:
		// a client changing its x-forwarded-for is still one client.
		named, err := grpclimit.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"127.0.0.1"}, Header: "X-Real-IP"})
		if err != nil {
			t.Fatal(err)
		}
		cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: one}, Identity: named}}), tcp)
		if callWith(t, cc, "x-real-ip", "192.0.2.1", "x-forwarded-for", "198.51.100.1") {
			t.Fatal("a first call was refused")
		}
		if !callWith(t, cc, "x-real-ip", "192.0.2.1", "x-forwarded-for", "198.51.100.2") {
			t.Fatal("a client chose a new identity with x-forwarded-for")
		}
		if _, err := grpclimit.ClientIP(keyfunc.IPConfig{Header: "x-client-ip"}); !errors.Is(err, ratelimit.ErrConfig) {
			t.Fatalf("unknown Header: %v, want ErrConfig", err)
		}
	})
	t.Run("peer", func(t *testing.T) {
		cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: one}, Identity: grpclimit.Peer()}}), tcp)
		if callWith(t, cc, "x-forwarded-for", "192.0.2.1") || !callWith(t, cc, "x-forwarded-for", "192.0.2.2") {
			t.Fatal("an untrusted peer chose its identity with x-forwarded-for")
		}
	})
	t.Run("metadata hashed", func(t *testing.T) {
		m := miniredis.RunT(t)
		cc, _ := serve(t, newServer(t, onRedis(t, m.Addr()), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: one}, Identity: grpclimit.Metadata("x-api-key")}}), pipe)
		if callWith(t, cc, "x-api-key", "sk-secret") || !callWith(t, cc, "x-api-key", "sk-secret") || callWith(t, cc, "x-api-key", "sk-other") {
			t.Fatal("API keys are not limited apart")
		}
		for _, k := range m.Keys() {
			if strings.Contains(k, "sk-") {
				t.Errorf("a raw API key in Redis: %q", k)
			}
		}
	})
	t.Run("binary metadata", func(t *testing.T) {
		// A -bin value reaches the key as its bytes, hashed: two tokens
		// differing in a byte no text could hold are limited apart.
		cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-token", Algorithm: one}, Identity: grpclimit.Metadata("x-token-bin")}}), pipe)
		if callWith(t, cc, "x-token-bin", "\x00\xffa") || callWith(t, cc, "x-token-bin", "\x00\xffb") || !callWith(t, cc, "x-token-bin", "\x00\xffa") {
			t.Fatal("binary tokens are not limited apart")
		}
	})
	t.Run("method", func(t *testing.T) {
		cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-method", Algorithm: one}, Identity: grpclimit.Method()}}), pipe)
		c := testpb.NewTestServiceClient(cc)
		if _, err := c.EmptyCall(context.Background(), &testpb.Empty{}); err != nil {
			t.Fatal(err)
		}
		if callWith(t, cc) || !callWith(t, cc) {
			t.Fatal("methods are not limited apart")
		}
	})
	t.Run("function", func(t *testing.T) {
		tenant := grpclimit.Key(func(ctx context.Context, method string) (string, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			return strings.Join(md.Get("tenant"), ""), nil
		})
		cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-tenant", Algorithm: one}, Identity: tenant}}), pipe)
		if callWith(t, cc, "tenant", "a") || callWith(t, cc, "tenant", "b") || !callWith(t, cc, "tenant", "a") {
			t.Fatal("tenants are not limited apart")
		}
		_, err := testpb.NewTestServiceClient(cc).UnaryCall(context.Background(), &testpb.SimpleRequest{})
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("no tenant: %v, want Unauthenticated", err)
		}
	})
}

// A metadata key no call can carry (empty, or with a character gRPC
// refuses in a key) is the server's misconfiguration, as keyfunc.Header's
// unusable names are: every call fails Internal and the error handler
// gets an ErrConfig, instead of every client being told Unauthenticated
// that it lacks the key. A key in upper case is the lower-case key.
func TestUnsatisfiableMetadataIsAConfigError(t *testing.T) {
	one := algorithms.FixedWindow{Limit: 1, Window: time.Hour}
	for _, name := range []string{"", "x api key", "x~api~key", "x-api-key\n"} {
		var got error
		s := newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: one}, Identity: grpclimit.Metadata(name)}},
			grpclimit.WithErrorHandler(func(_ context.Context, _ string, err error) { got = err }))
		cc, _ := serve(t, s, pipe)
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "k")
		_, err := testpb.NewTestServiceClient(cc).UnaryCall(ctx, &testpb.SimpleRequest{})
		if status.Code(err) != codes.Internal {
			t.Errorf("Metadata(%q): the call got %v, want Internal", name, err)
		}
		if !errors.Is(got, ratelimit.ErrConfig) {
			t.Errorf("Metadata(%q): the error handler got %v, want ErrConfig", name, got)
		}
	}
	cc, _ := serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-key", Algorithm: one}, Identity: grpclimit.Metadata("X-API-Key")}}), pipe)
	if callWith(t, cc, "x-api-key", "k") || !callWith(t, cc, "x-api-key", "k") {
		t.Fatal("Metadata(\"X-API-Key\") does not read x-api-key")
	}
	// The authority, a pseudo-header, is metadata a server reads.
	cc, _ = serve(t, newServer(t, onMemstore(), []grpclimit.Rule{{Rule: limiter.Rule{Name: "per-host", Algorithm: one}, Identity: grpclimit.Metadata(":authority")}}), pipe)
	if callWith(t, cc) || !callWith(t, cc) {
		t.Fatal("Metadata(\":authority\") does not read the call's authority")
	}
}
