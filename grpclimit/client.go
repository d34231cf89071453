package grpclimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
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
// client.Transport does for HTTP (they drive a client.Pacer, its pacing
// without HTTP). The zero value is ready to use; set the fields before the
// first call. It is safe for concurrent use.
//
// Pacing: what a server's ratelimit metadata says (the IETF RateLimit and
// RateLimit-Policy fields) is kept per connection target and rule, the
// members of those fields by name, and calls wait for each rule as
// client.Transport's requests wait for their host, so that a client that
// keeps calling gets the rate the server advertises without a refusal. A
// call is paced by the rules its method's latest response named: calls of
// every method a rule spans share its quota (a rule without methods spans
// them all), and a rule of some methods paces only those. A method's
// first call, whose rules are not known yet, waits only for what holds
// every call to the target (a refusal that named no rule, such as
// codes.Unavailable).
//
// Retries: a call refused with codes.ResourceExhausted and a RetryInfo is
// sent again once that wait has passed (the RetryInfo's delay as given,
// not rounded as a Retry-After in whole seconds is), up to MaxAttempts
// sends, when the wait ends within MaxWait and the call's deadline.
// Otherwise the call returns the server's status unchanged; a call that
// its server is known to refuse until past them is not sent, and fails
// at once with codes.ResourceExhausted and an error wrapping
// client.ErrWaitTooLong. A refusal without RetryInfo (a cost no wait can
// admit) is never retried. A codes.Unavailable with a RetryInfo (a
// server failing closed) holds the calls after it for its wait, and is
// not retried.
type Client struct {
	// MaxAttempts bounds the sends of one call, the first included
	// (default 3).
	MaxAttempts int
	// MaxWait bounds how long one call may wait for pacing and retries
	// altogether (default 30 s).
	MaxWait time.Duration

	pacer client.Pacer
	clock clock
}

// Defaults, applied when a field of Client is zero: client.Transport's.
const (
	defaultMaxAttempts = 3
	defaultMaxWait     = 30 * time.Second
)

// UnaryClientInterceptor paces and retries unary calls.
func (c *Client) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return c.do(ctx, cc.Target(), method, func() (metadata.MD, error) {
			var header, trailer metadata.MD
			err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&header), grpc.Trailer(&trailer))...)
			return metadata.Join(header, trailer), err
		})
	}
}

// StreamClientInterceptor paces the opening of streams and opens again
// one refused when it opened. A stream is open once the server's response
// header metadata has arrived, which StreamServerInterceptor sends when
// it admits a stream (a refused stream ends at once, without headers): use
// it on connections to such servers, since a server that sends no header
// until it has received a message would wait for one the client does not
// send until the stream is open. A Server sends no header either for the
// streams it leaves unlimited (WithExemptMethods, or a method no stack of
// a rules file names): one whose handler waits for the client's first
// message would wait until its deadline, so keep such methods' streams
// off this interceptor. Streams to DefaultExemptMethods (health,
// reflection) pass straight through.
func (c *Client) StreamClientInterceptor() grpc.StreamClientInterceptor {
	exempt, _ := compile(defaultExempt)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if exempt.match(method) {
			return streamer(ctx, desc, cc, method, opts...)
		}
		var open grpc.ClientStream
		send := func() (metadata.MD, error) {
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
		}
		if err := c.do(ctx, cc.Target(), method, send); err != nil {
			return nil, err
		}
		return open, nil
	}
}

// do makes a call of method with send, which sends it once more each
// time, to target: it waits for the call's turn, paced by target and
// rule, retries a refusal with a RetryInfo once its wait has passed, and
// returns the call's outcome.
func (c *Client) do(ctx context.Context, target, method string, send func() (metadata.MD, error)) error {
	start := c.clock.Now()
	maxWait := cmp.Or(max(c.MaxWait, 0), defaultMaxWait)
	deadline, byContext := start.Add(maxWait), false
	if d, ok := ctx.Deadline(); ok {
		// The context's deadline is on the real clock.
		if d := start.Add(time.Until(d)); d.Before(deadline) {
			deadline, byContext = d, true
		}
	}
	attempts := cmp.Or(max(c.MaxAttempts, 0), defaultMaxAttempts)
	var err error
	for attempt := 1; ; attempt++ {
		now := c.clock.Now()
		turn, ok := c.pacer.Reserve(target, method, now, deadline)
		if !ok {
			switch {
			case attempt > 1:
				return err // the server's refusal
			case !turn.At.After(now): // nothing holds the call: its deadline has passed
				return status.FromContextError(context.DeadlineExceeded).Err()
			}
			return tooLong(target, method, turn.At.Sub(start), maxWait, byContext)
		}
		if err := c.clock.sleepUntil(ctx, turn.At); err != nil {
			return status.FromContextError(err).Err()
		}
		var md metadata.MD
		md, err = send()
		wait, code := retryAfter(err)
		turn.Observe(c.clock.Now(), md.Get(ietf.RateLimit), md.Get(ietf.Policy), wait)
		if code != codes.ResourceExhausted || attempt >= attempts {
			return err
		}
	}
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

// tooLong is the error of a call of method held for wait by target, past
// maxWait or, when byContext, the call's deadline.
func tooLong(target, method string, wait, maxWait time.Duration, byContext bool) error {
	wait = wait.Round(time.Millisecond)
	past := fmt.Sprintf("more than MaxWait (%v)", maxWait)
	if byContext {
		past = "past the call's deadline"
	}
	return &waitError{err: fmt.Errorf("%w: %s takes no %s call for %v, %s", client.ErrWaitTooLong, target, method, wait, past)}
}

// retryAfter is the wait of err, when it is a refusal's status with a
// positive RetryInfo (as given: a RetryInfo is not a Retry-After, which
// counts whole seconds), and its code: a
// codes.ResourceExhausted refusal, or a codes.Unavailable one (a server
// failing closed). It is zero and codes.OK for any other outcome.
func retryAfter(err error) (time.Duration, codes.Code) {
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted && st.Code() != codes.Unavailable {
		return 0, codes.OK
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().IsValid() {
			if wait := ri.GetRetryDelay().AsDuration(); wait > 0 {
				return wait, st.Code()
			}
		}
	}
	return 0, codes.OK
}
