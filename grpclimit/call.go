package grpclimit

import (
	"context"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// call is one call (or one received message) as the middleware sees it:
// the request view it decides on, and the http.ResponseWriter it answers
// through, which records the answer for the interceptor to turn into
// gRPC's.
type call struct {
	req    *http.Request
	header http.Header // the middleware's response fields: the ratelimit metadata
	status int         // what the middleware answered, when it did not admit the call
	// admitted is set when the middleware runs the call (allowed, in
	// shadow mode, or failing open); denied, with refusal, when a rule
	// refused it.
	admitted, denied bool
	refusal          limiter.Decision
	code             codes.Code // the call's code once it ended, for Rule.Settle
	msg              any        // the received message a message's decision weighs
	run              func()     // runs the call, once admitted
}

type callKey struct{}

// newCall returns the call of method on ctx, with its request view: a
// POST of method (its URL path and Pattern), from the peer's address
// (RemoteAddr), with the incoming metadata as header fields (binary
// values and pseudo-headers left out), on ctx.
func newCall(ctx context.Context, method string) *call {
	c := &call{header: make(http.Header, 2)}
	md, _ := metadata.FromIncomingContext(ctx)
	h := make(http.Header, len(md))
	for k, v := range md {
		if !strings.HasPrefix(k, ":") && !strings.HasSuffix(k, "-bin") {
			h[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
	}
	// A value, copied once onto the heap with its context by WithContext.
	r := http.Request{Method: http.MethodPost, URL: &url.URL{Path: method}, Pattern: method,
		Proto: "HTTP/2.0", ProtoMajor: 2, Header: h, Body: http.NoBody}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
	}
	if a := md.Get(":authority"); len(a) > 0 {
		r.Host = a[0]
	}
	c.req = r.WithContext(context.WithValue(ctx, callKey{}, c))
	return c
}

// callOf is the call of a request view.
func callOf(r *http.Request) *call { return r.Context().Value(callKey{}).(*call) }

func (c *call) Header() http.Header { return c.header }

// Write discards what the middleware writes: a refusal's body, which
// the status replaces.
func (c *call) Write(b []byte) (int, error) { return len(b), nil }

func (c *call) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

// serve is the handler the middleware runs an admitted call with.
var serve = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
	c := callOf(r)
	c.admitted = true
	c.run()
})

// deny is the middleware's deny handler: it records the refusal.
func deny(_ http.ResponseWriter, r *http.Request, d limiter.Decision) {
	c := callOf(r)
	c.denied, c.refusal = true, d
}

// metadata is the ratelimit and ratelimit-policy metadata of the
// middleware's answer, nil when it set none (failing open).
func (c *call) metadata() metadata.MD {
	var md metadata.MD
	for _, f := range fields {
		if v := c.header[f.header]; len(v) > 0 {
			if md == nil {
				md = make(metadata.MD, len(fields))
			}
			md[f.key] = v
		}
	}
	return md
}

// fields are the middleware's response fields sent as metadata: the
// IETF draft's, under their names in lower case.
var fields = [...]struct{ header, key string }{
	{"Ratelimit", "ratelimit"},
	{"Ratelimit-Policy", "ratelimit-policy"},
}
