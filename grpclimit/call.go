package grpclimit

import (
	"context"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// call is one call (or one received message) as the middleware sees it:
// the request view it decides on, and the http.ResponseWriter it answers
// through, which records the answer for the interceptor to turn into
// gRPC's. It is also the request view's context: the call's own, which it
// embeds, through which the middleware's callbacks find the call (see
// callOf) without a context.WithValue per call.
type call struct {
	context.Context // the call's
	req             *http.Request
	url             url.URL     // req.URL
	header          http.Header // the middleware's response fields: the ratelimit metadata
	status          int         // what the middleware answered, when it did not admit the call
	// admitted is set when the middleware runs the call (allowed, in
	// shadow mode, or failing open); denied, with refusal, when a rule
	// refused it.
	admitted, denied bool
	refusal          limiter.Decision
	code             codes.Code  // the call's code once it ended, for Rule.Settle: Unknown if its handler panicked
	msg              any         // the received message a message's decision weighs
	run              func(*call) // runs the call, once admitted
	// A unary call's handler, request, response and error (see
	// serveUnary); a stream's error.
	unary   grpc.UnaryHandler
	in, out any
	err     error
}

type callKey struct{}

// newCall returns the call of method on ctx, with its request view: a
// POST of method (its URL path and Pattern), from the peer's address
// (RemoteAddr), with the incoming metadata as header fields (binary
// values and pseudo-headers left out), on ctx.
func newCall(ctx context.Context, method string) *call {
	c := &call{Context: ctx, header: make(http.Header, 2)}
	c.url.Path = method
	md, _ := metadata.FromIncomingContext(ctx) // a copy of its own
	// A value, copied once onto the heap with its context by WithContext.
	r := http.Request{Method: http.MethodPost, URL: &c.url, Pattern: method,
		Proto: "HTTP/2.0", ProtoMajor: 2, Body: http.NoBody}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
	}
	if a := md.Get(":authority"); len(a) > 0 {
		r.Host = a[0]
	}
	r.Header = header(md)
	c.req = r.WithContext(c)
	return c
}

// header turns md, a copy of a call's incoming metadata, into its request
// view's header fields, in place: each key canonical, binary values and
// pseudo-headers left out. md's keys are lower case, so a canonical key
// that differs from its own is new to md, and its own canonical key.
func header(md metadata.MD) http.Header {
	for k, v := range md {
		if strings.HasPrefix(k, ":") || strings.HasSuffix(k, "-bin") {
			delete(md, k)
			continue
		}
		if ck := textproto.CanonicalMIMEHeaderKey(k); ck != k {
			delete(md, k)
			md[ck] = v
		}
	}
	return http.Header(md)
}

// Value is the call for callKey, else the call's context's value.
func (c *call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
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
	c.run(c)
})

// serveUnary runs an admitted unary call: it sets the call's ratelimit
// metadata as its response header metadata, then runs its handler.
func serveUnary(c *call) {
	setHeader(c.Context, c)
	c.code = codes.Unknown // until the handler returns: a panic settles so
	c.out, c.err = c.unary(c.Context, c.in)
	c.code = status.Code(c.err)
}

// deny is the middleware's deny handler: it records the refusal.
func deny(_ http.ResponseWriter, r *http.Request, d limiter.Decision) {
	c := callOf(r)
	c.denied, c.refusal = true, d
}

// metadata is the ratelimit and ratelimit-policy metadata of the
// middleware's answer, nil when it set none (failing open). It is made in
// place of the answer's fields, which it replaces: once per call, when
// the middleware has answered.
func (c *call) metadata() metadata.MD {
	var values [len(fields)][]string
	found := false
	for i, f := range fields {
		values[i] = c.header[f.header]
		found = found || len(values[i]) > 0
	}
	if !found {
		return nil
	}
	md := metadata.MD(c.header)
	clear(md)
	for i, f := range fields {
		if len(values[i]) > 0 {
			md[f.key] = values[i]
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
