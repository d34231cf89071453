package grpclimit

import (
	"context"
	"fmt"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Server limits the calls of a gRPC server: its UnaryServerInterceptor
// and StreamServerInterceptor decide its rules, as one stack per call. It
// is safe for concurrent use.
type Server struct {
	open     http.Handler // the middleware of every rule, around serve
	messages http.Handler // that of the rules with a MessageCost; nil without
	exempt   methods
}

// New returns the interceptors that decide rules on lim, which must have
// every rule of rules as LimiterRules(rules) gives them:
//
//	lim, err := limiter.New(store, grpclimit.LimiterRules(rules))
//	...
//	s, err := grpclimit.New(lim, rules)
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryServerInterceptor()),
//		grpc.ChainStreamInterceptor(s.StreamServerInterceptor()))
//
// Invalid rules or options are an error (wrapping ratelimit.ErrConfig)
// naming the rule.
func New(lim *limiter.Limiter, rules []Rule, opts ...Option) (*Server, error) {
	cfg := config{exempt: defaultExempt}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ratelimit.ErrConfig)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	open, messages, err := httpRules(rules)
	if err != nil {
		return nil, err
	}
	mwOpts := append([]middleware.Option{
		middleware.WithHeaders(headers.Names{Policy: "RateLimit-Policy", RateLimit: "RateLimit"}),
		middleware.WithDenyHandler(deny),
	}, cfg.mw...)
	s := &Server{}
	if s.exempt, err = compile(cfg.exempt); err != nil {
		return nil, fmt.Errorf("%w: exempt methods: %w", ratelimit.ErrConfig, err)
	}
	mw, err := middleware.NewWithLimiter(lim, open, mwOpts...)
	if err != nil {
		return nil, err
	}
	s.open = mw(serve)
	if len(messages) > 0 {
		mw, err := middleware.NewWithLimiter(lim, messages, mwOpts...)
		if err != nil {
			return nil, err
		}
		s.messages = mw(serve)
	}
	return s, nil
}

// UnaryServerInterceptor limits unary calls: a refused call gets its
// status (see the package doc) and its handler does not run; an admitted
// one runs with the ratelimit metadata set as its response header
// metadata, and settles after the handler returns.
func (s *Server) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if s.exempt.match(info.FullMethod) {
			return handler(ctx, req)
		}
		c := newCall(ctx, info.FullMethod)
		c.run, c.unary, c.in = serveUnary, handler, req
		s.open.ServeHTTP(c, c.req)
		if refused := c.refused(ctx); refused != nil {
			setHeader(ctx, c)
			return nil, refused
		}
		return c.out, c.err
	}
}

// setHeader sets c's ratelimit metadata, if any, as the unary call's
// response header metadata.
func setHeader(ctx context.Context, c *call) {
	if md := c.metadata(); md != nil {
		_ = grpc.SetHeader(ctx, md)
	}
}

// StreamServerInterceptor limits streams when they open: a refused stream
// ends at once with its status, the ratelimit metadata in its trailer
// metadata (a response without headers, which tells a client at once
// that the stream did not open); an admitted one sends its response header
// metadata, with the ratelimit metadata, before its handler runs (so a
// client learns at once that its stream was admitted; the handler cannot
// add header metadata of its own, only trailers), holds a concurrency
// limit's slot until its handler returns, and settles then. With rules
// that have a MessageCost, each message it receives is decided too.
func (s *Server) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if s.exempt.match(info.FullMethod) {
			return handler(srv, ss)
		}
		ctx := ss.Context()
		c := newCall(ctx, info.FullMethod)
		c.run = func(c *call) {
			_ = ss.SendHeader(c.metadata())
			stream := ss
			if s.messages != nil && info.IsClientStream {
				stream = &meteredStream{ServerStream: ss, s: s, method: info.FullMethod}
			}
			c.code = codes.Unknown // until the handler returns: a panic settles so
			c.err = handler(srv, stream)
			c.code = status.Code(c.err)
		}
		s.open.ServeHTTP(c, c.req)
		if refused := c.refused(ctx); refused != nil {
			// In the trailer: a refused stream ends without headers, which
			// tells a client at once that it did not open.
			ss.SetTrailer(c.metadata())
			return refused
		}
		return c.err
	}
}

// meteredStream decides each message its client sends, for the rules
// with a MessageCost.
type meteredStream struct {
	grpc.ServerStream
	s      *Server
	method string
}

// RecvMsg receives m, then decides it: a refused message ends the stream's
// receiving with its refusal.
func (m *meteredStream) RecvMsg(msg any) error {
	if err := m.ServerStream.RecvMsg(msg); err != nil {
		return err
	}
	ctx := m.Context()
	c := newCall(ctx, m.method)
	c.msg, c.run = msg, func(*call) {}
	m.s.messages.ServeHTTP(c, c.req)
	return c.refused(ctx)
}
