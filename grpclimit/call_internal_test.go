package grpclimit

import (
	"context"
	"maps"
	"net"
	"net/http"
	"slices"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// TestRequestView checks the request view of a call: its metadata as
// canonical header fields without binary values and pseudo-headers, its
// authority as Host, its peer as RemoteAddr, its method as path and
// Pattern, and the call found again through the view's context.
func TestRequestView(t *testing.T) {
	md := metadata.MD{
		":authority":      {"svc.example:443"},
		"content-type":    {"application/grpc"},
		"x-api-key":       {"k1", "k2"},
		"x-forwarded-for": {"203.0.113.7"},
		"trace-bin":       {"\x00\x01"},
		"123":             {"digits"},
	}
	ctx := metadata.NewIncomingContext(context.Background(), md)
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 5000}})
	c := newCall(ctx, "/pkg.Service/Method")
	r := c.req

	want := http.Header{
		"Content-Type":    {"application/grpc"},
		"X-Api-Key":       {"k1", "k2"},
		"X-Forwarded-For": {"203.0.113.7"},
		"123":             {"digits"},
	}
	if got := r.Header; !maps.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("header = %v, want %v", got, want)
	}
	for _, tc := range []struct{ name, got, want string }{
		{"Host", r.Host, "svc.example:443"},
		{"RemoteAddr", r.RemoteAddr, "192.0.2.1:5000"},
		{"URL.Path", r.URL.Path, "/pkg.Service/Method"},
		{"Pattern", r.Pattern, "/pkg.Service/Method"},
		{"Method", r.Method, http.MethodPost},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if got := callOf(r); got != c {
		t.Errorf("callOf(view) = %p, want the call %p", got, c)
	}
	// The view's context is the call's: its values and its end.
	if got, _ := metadata.FromIncomingContext(r.Context()); len(got["x-api-key"]) != 2 {
		t.Errorf("metadata through the view's context = %v, want the call's", got)
	}
	if got := md["x-api-key"]; len(got) != 2 || got[0] != "k1" {
		t.Errorf("the call's own metadata changed: %v", md)
	}
}

// TestMetadata checks the ratelimit metadata made from the middleware's
// answer: the two fields under their lower-case names, nothing else, and
// none when the middleware set neither.
func TestMetadata(t *testing.T) {
	c := &call{header: http.Header{
		"Ratelimit":        {`"r";r=1`},
		"Ratelimit-Policy": {`"r";q=2;w=1`},
		"Cache-Control":    {"no-store"},
	}}
	want := metadata.MD{"ratelimit": {`"r";r=1`}, "ratelimit-policy": {`"r";q=2;w=1`}}
	if got := c.metadata(); !maps.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("metadata = %v, want %v", got, want)
	}
	c = &call{header: http.Header{"Cache-Control": {"no-store"}}}
	if got := c.metadata(); got != nil {
		t.Errorf("metadata without the fields = %v, want nil", got)
	}
}
