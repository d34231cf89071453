package grpclimit

import (
	"context"
	"maps"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestCallView checks what rules read of a call: its method, its peer, its
// metadata in any case (binary values as their bytes), its forwarding
// metadata and its context.
func TestCallView(t *testing.T) {
	md := metadata.MD{
		":authority":      {"svc.example:443"},
		"x-api-key":       {"k1", "k2"},
		"x-forwarded-for": {"203.0.113.7"},
		"trace-bin":       {"\x00\x01"},
	}
	ctx := metadata.NewIncomingContext(context.Background(), md)
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 5000}})
	c := newCall(ctx, "/pkg.Service/Method")
	for _, tc := range []struct{ name, got, want string }{
		{"Method", c.Method(), "/pkg.Service/Method"},
		{"Peer", c.Peer(), "192.0.2.1:5000"},
		{"Metadata", c.Metadata("X-API-Key")[1], "k2"},
		{"binary Metadata", c.Metadata("trace-bin")[0], "\x00\x01"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if _, xff, _ := c.Forwarded(); !slices.Equal(xff, []string{"203.0.113.7"}) {
		t.Errorf("x-forwarded-for = %q", xff)
	}
	if got, _ := metadata.FromIncomingContext(c.Context()); len(got["x-api-key"]) != 2 {
		t.Errorf("metadata through the call's context = %v, want the call's", got)
	}
}

// TestRateLimitMetadata checks the ratelimit metadata of a decision: the
// IETF fields under their lower-case names, nothing else, and none for a
// decision of no rule.
func TestRateLimitMetadata(t *testing.T) {
	d := limiter.Decision{Allowed: true, Results: []limiter.RuleResult{{Rule: "r",
		Policy: algorithms.Policy{Quota: 2, Window: time.Second}, Result: algorithms.Result{Allowed: true, Remaining: 1}}}}
	want := metadata.MD{"ratelimit": {`"r";r=1`}, "ratelimit-policy": {`"r";q=2;w=1`}}
	if got := (&Server{metadata: true}).rateLimitMetadata(d); !maps.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("metadata = %v, want %v", got, want)
	}
	if got := (&Server{metadata: true}).rateLimitMetadata(limiter.Decision{Allowed: true}); got != nil {
		t.Errorf("metadata of no rule = %v, want nil", got)
	}
}
