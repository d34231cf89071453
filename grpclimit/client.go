package grpclimit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// Client obeys rate-limited gRPC servers: its UnaryClientInterceptor and
// StreamClientInterceptor pace calls and retry refused ones, as
// client.Transport does for HTTP (they run on one, whose logic they
// share). The zero value is ready to use; set the fields before the
// first call. It is safe for concurrent use.
//
// Pacing: what a server's ratelimit metadata says (the IETF RateLimit and
// RateLimit-Policy fields) is kept per connection target and method, and
// calls wait as client.Transport's requests wait for their host, so that
// a client that keeps calling gets the rate the server advertises without
// a refusal.
//
// Retries: a call refused with codes.ResourceExhausted and a RetryInfo is
// sent again once that wait has passed (rounded up to whole seconds, as
// client.Transport reads Retry-After), up to MaxAttempts sends, when the
// wait ends within MaxWait and the call's deadline. Otherwise the call
// returns the server's status unchanged; a call that its server is known
// to refuse until past them is not sent, and fails at once with
// codes.ResourceExhausted and an error wrapping client.ErrWaitTooLong. A
// refusal without RetryInfo (a cost no wait can admit) is never retried.
// A codes.Unavailable with a RetryInfo (a server failing closed) holds
// the calls after it for its wait, and is not retried.
type Client struct {
	// MaxAttempts bounds the sends of one call, the first included
	// (default 3).
	MaxAttempts int
	// MaxWait bounds how long one call may wait for pacing and retries
	// altogether (default 30 s).
	MaxWait time.Duration

	once sync.Once
	t    *client.Transport
}

func (c *Client) transport() *client.Transport {
	c.once.Do(func() {
		c.t = &client.Transport{Base: roundTripper{}, MaxAttempts: c.MaxAttempts, MaxWait: c.MaxWait}
	})
	return c.t
}

// UnaryClientInterceptor paces and retries unary calls.
func (c *Client) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		a := &attempt{ctx: ctx, send: func() (metadata.MD, error) {
			var header, trailer metadata.MD
			err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&header), grpc.Trailer(&trailer))...)
			return metadata.Join(header, trailer), err
		}}
		return c.do(a, cc.Target(), method)
	}
}

// StreamClientInterceptor paces the opening of streams and opens again
// one refused when it opened. A stream is open once the server's response
// header metadata has arrived, which StreamServerInterceptor sends when
// it admits a stream (a refused stream ends at once, without headers): use
// it on connections to such servers, since a server that sends no header
// until it has received a message would wait for one the client does not
// send until the stream is open. Streams to DefaultExemptMethods
// (health, reflection) pass straight through.
func (c *Client) StreamClientInterceptor() grpc.StreamClientInterceptor {
	exempt, _ := compile(defaultExempt)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if exempt.match(method) {
			return streamer(ctx, desc, cc, method, opts...)
		}
		var open grpc.ClientStream
		a := &attempt{ctx: ctx, send: func() (metadata.MD, error) {
			s, err := streamer(ctx, desc, cc, method, opts...)
			if err != nil {
				return nil, err
			}
			header, _ := s.Header()
			if header == nil {
				// The stream ended without headers: refused, or over
				// before it began; its status comes with RecvMsg.
				err := s.RecvMsg(&emptypb.Empty{})
				if errors.Is(err, io.EOF) {
					err = nil
					open = s
				}
				return s.Trailer(), err
			}
			open = s
			return header, nil
		}}
		if err := c.do(a, cc.Target(), method); err != nil {
			return nil, err
		}
		return open, nil
	}
}

// attempt is one call through the Transport: send makes it once more,
// and err is the latest send's outcome.
type attempt struct {
	ctx  context.Context
	send func() (metadata.MD, error)
	err  error
}

type attemptKey struct{}

// do runs a through the Transport, its host the connection's target and
// the method, and returns the call's outcome.
func (c *Client) do(a *attempt, target, method string) error {
	req := (&http.Request{Method: http.MethodPost, URL: &url.URL{Scheme: "grpc", Host: target + method},
		Header: make(http.Header), Body: http.NoBody}).WithContext(context.WithValue(a.ctx, attemptKey{}, a))
	if _, err := c.transport().RoundTrip(req); err != nil {
		if errors.Is(err, client.ErrWaitTooLong) {
			return &waitError{err: err}
		}
		return status.FromContextError(err).Err()
	}
	return a.err
}

// waitError is a call not sent because its server is known to refuse it
// until past MaxWait or its deadline: codes.ResourceExhausted, wrapping
// client.ErrWaitTooLong.
type waitError struct{ err error }

func (e *waitError) Error() string { return e.err.Error() }
func (e *waitError) Unwrap() error { return e.err }

// GRPCStatus is the error's status, for status.FromError and status.Code.
func (e *waitError) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, e.err.Error())
}

// roundTripper sends a request's attempt and answers with what the
// Transport reads: the ratelimit metadata as the IETF fields, and a
// refusal as a 429 (or a failing-closed server's 503) with its RetryInfo
// as Retry-After.
type roundTripper struct{}

func (roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	a := req.Context().Value(attemptKey{}).(*attempt)
	md, err := a.send()
	a.err = err
	res := &http.Response{StatusCode: http.StatusOK, Header: make(http.Header, 3), Body: http.NoBody, Request: req}
	for _, f := range fields {
		if v := md.Get(f.key); len(v) > 0 {
			res.Header[f.header] = v
		}
	}
	if err == nil {
		return res, nil
	}
	res.StatusCode = http.StatusInternalServerError
	st := status.Convert(err)
	wait, ok := retryDelay(st)
	switch {
	case ok && st.Code() == codes.ResourceExhausted:
		res.StatusCode = http.StatusTooManyRequests
	case ok && st.Code() == codes.Unavailable:
		res.StatusCode = http.StatusServiceUnavailable
	default:
		return res, nil
	}
	res.Header.Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
	return res, nil
}

// fields are the ratelimit metadata, which the Transport reads as the
// IETF draft's header fields.
var fields = [...]struct{ header, key string }{
	{"Ratelimit", "ratelimit"},
	{"Ratelimit-Policy", "ratelimit-policy"},
}

// retryDelay is st's RetryInfo delay, when it has a positive one.
func retryDelay(st *status.Status) (time.Duration, bool) {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().IsValid() {
			if wait := ri.GetRetryDelay().AsDuration(); wait > 0 {
				return wait, true
			}
		}
	}
	return 0, false
}
