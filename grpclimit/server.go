package grpclimit

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Server limits the calls of a gRPC server: its UnaryServerInterceptor
// and StreamServerInterceptor decide its rules, as one stack per call. It
// is safe for concurrent use.
type Server struct {
	// open is the guard that decides a call of a method when it starts:
	// one for every method, or a rules file's stack (nil: none, the call
	// is not limited).
	open     func(method string) *guard.Guard[*Call]
	messages *guard.Guard[*Call] // the rules given WithMessageCost; nil without
	exempt   methods
	metadata bool             // send the ratelimit metadata (not WithoutMetadata)
	lim      *limiter.Limiter // Close closes it when New built it
}

// New returns the interceptors that decide rules on s (a redisstore.New,
// or memstore.New), with a limiter of their own that Close closes:
//
//	srv, err := grpclimit.New(store, rules)
//	defer srv.Close()
//	server := grpc.NewServer(grpc.ChainUnaryInterceptor(srv.UnaryServerInterceptor()),
//		grpc.ChainStreamInterceptor(srv.StreamServerInterceptor()))
//
// Invalid rules or options are an error (wrapping ratelimit.ErrConfig)
// naming the rule.
func New(s store.Store, rules []Rule, opts ...Option) (*Server, error) {
	lim, err := limiter.New(s, guard.Limits(rules))
	if err != nil {
		return nil, err
	}
	srv, err := NewWithLimiter(lim, rules, opts...)
	if err != nil {
		_ = lim.Close()
		return nil, err
	}
	srv.lim = lim
	return srv, nil
}

// NewWithLimiter is New on a limiter of your own (limiter options, a
// limiter shared with an HTTP door), which must have every rule of rules
// as guard.Limits(rules) gives them. Close does not close it.
func NewWithLimiter(lim *limiter.Limiter, rules []Rule, opts ...Option) (*Server, error) {
	s, cfg, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	open, messages, err := layerRules(rules, cfg)
	if err != nil {
		return nil, err
	}
	g, err := guard.New(lim, open, cfg.guard)
	if err != nil {
		return nil, err
	}
	s.open = func(string) *guard.Guard[*Call] { return g }
	if len(messages) > 0 {
		if s.messages, err = guard.New(lim, messages, cfg.guard); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// FromFile returns the interceptors that decide calls by the gRPC stacks
// of a rules file (config.Load; the stacks with methods): each call by the
// stack whose methods name it, on the rules in force when it arrives,
// through reloads (Limits.Watch, Limits.Reload). A call no stack names is
// not limited. The file's HTTP stacks and these share one limiter, so a
// rule in both keeps one count. WithMethods and WithMessageCost are for
// rules given in Go, not here; a stack's fail policy adds to
// WithFailClosed. Close the Limits, not the Server, once the server has
// stopped.
func FromFile(l *config.Limits, opts ...Option) (*Server, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil limits", ratelimit.ErrConfig)
	}
	s, cfg, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if len(cfg.methods) > 0 || len(cfg.messageCost) > 0 {
		return nil, fmt.Errorf("%w: WithMethods and WithMessageCost are for rules given in Go; a file's stacks name their methods", ratelimit.ErrConfig)
	}
	calls, err := config.ServeCalls(l, cfg.guard)
	if err != nil {
		return nil, err
	}
	s.open = calls.Guard
	return s, nil
}

// newServer is a Server of opts, without its guards.
func newServer(opts []Option) (*Server, *settings, error) {
	cfg := &settings{}
	for _, o := range opts {
		if o == nil {
			return nil, nil, fmt.Errorf("%w: nil option", ratelimit.ErrConfig)
		}
		if err := o(cfg); err != nil {
			return nil, nil, err
		}
	}
	cfg.guard.Route = (*Call).Method
	s := &Server{metadata: !cfg.noMetadata}
	var err error
	if s.exempt, err = compile(cfg.exemptMethods()); err != nil {
		return nil, nil, fmt.Errorf("%w: exempt methods: %w", ratelimit.ErrConfig, err)
	}
	return s, cfg, nil
}

// Close closes the limiter New built, which gives back the units of
// leased rules: call it once the gRPC server has stopped.
func (s *Server) Close() error {
	if s.lim == nil {
		return nil
	}
	return s.lim.Close()
}

// UnaryServerInterceptor limits unary calls: a refused call gets its
// status (see the package doc) and its handler does not run; an admitted
// one runs with the ratelimit metadata set as its response header
// metadata, and settles after the handler returns.
func (s *Server) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		g := s.guard(info.FullMethod)
		if g == nil {
			return handler(ctx, req)
		}
		c := newCall(ctx, info.FullMethod)
		res := g.Decide(ctx, c)
		if md := s.rateLimitMetadata(res.Decision); md != nil {
			_ = grpc.SetHeader(ctx, md)
		}
		if err := refused(&res); err != nil {
			return nil, err
		}
		end := guard.End{Status: int(codes.Unknown)} // until the handler returns: a panic settles so
		defer finish(ctx, g, c, &res, &end)
		out, err := handler(ctx, req)
		end.Status = int(code(err))
		return out, err
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
// given WithMessageCost, each message it receives is decided too.
func (s *Server) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		g := s.guard(info.FullMethod)
		if g == nil {
			return handler(srv, ss)
		}
		ctx := ss.Context()
		c := newCall(ctx, info.FullMethod)
		res := g.Decide(ctx, c)
		md := s.rateLimitMetadata(res.Decision)
		if err := refused(&res); err != nil {
			ss.SetTrailer(md)
			return err
		}
		_ = ss.SendHeader(md) // also without metadata: a paced client waits for the header
		stream := ss
		if s.messages != nil && info.IsClientStream {
			stream = &meteredStream{ServerStream: ss, s: s, method: info.FullMethod}
		}
		end := guard.End{Status: int(codes.Unknown)} // until the handler returns: a panic settles so
		defer finish(ctx, g, c, &res, &end)
		err := handler(srv, stream)
		end.Status = int(code(err))
		return err
	}
}

// finish settles res, the result of call c, as *end says once the call
// has ended: a deferred call, which reads end when it runs.
func finish(ctx context.Context, g *guard.Guard[*Call], c *Call, res *guard.Result, end *guard.End) {
	g.Finish(ctx, c, res, *end)
}

// code is the code gRPC ends a call with when its handler returns err: a
// status's, or a context error's (Canceled, DeadlineExceeded); Unknown for
// any other error.
func code(err error) codes.Code {
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	return status.FromContextError(err).Code()
}

// guard is the guard that decides a call of method when it starts; nil
// for an exempt method, or one no stack of a file names.
func (s *Server) guard(method string) *guard.Guard[*Call] {
	if s.exempt.match(method) {
		return nil
	}
	return s.open(method)
}

// meteredStream decides each message its client sends, for the rules
// given WithMessageCost.
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
	c.message = msg
	res := m.s.messages.Decide(ctx, c)
	// A message holds nothing once decided: its rules have no Settle, and a
	// slot one took (a Plan that chose a limit of calls in flight) goes
	// back at once.
	m.s.messages.Finish(ctx, c, &res, guard.End{})
	return refused(&res)
}

// ietf writes the fields under their canonical HTTP names, which the
// headers package takes as they are; rateLimitMetadata renames them as
// gRPC's metadata keys are, in lower case.
var ietf = headers.Names{Policy: "Ratelimit-Policy", RateLimit: "Ratelimit"}

// rateLimitMetadata is the ratelimit and ratelimit-policy metadata of d,
// nil when d decided nothing (an exempt call, a policy failing open) or
// WithoutMetadata.
func (s *Server) rateLimitMetadata(d limiter.Decision) metadata.MD {
	if !s.metadata || len(d.Results) == 0 {
		return nil
	}
	md := make(metadata.MD, 2)
	ietf.Write(map[string][]string(md), d)
	for _, k := range [...]struct{ field, key string }{{ietf.Policy, "ratelimit-policy"}, {ietf.RateLimit, "ratelimit"}} {
		if v, ok := md[k.field]; ok {
			delete(md, k.field)
			md[k.key] = v
		}
	}
	return md
}
