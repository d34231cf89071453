package rls

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Options are a Server's choices; the zero value is every default.
type Options struct {
	// FailOpen answers OK, every descriptor OK, when the limiter fails to
	// decide. By default the call fails with UNAVAILABLE, so that
	// Envoy's failure_mode_deny decides.
	FailOpen bool
	// ShadowMode answers OK overall whatever the limits say; each
	// descriptor's status keeps its own code (the reference's SHADOW_MODE).
	ShadowMode bool
	// QuotaMode puts every limit in quota mode (the reference's
	// QUOTA_MODE): a request over a limit is answered OK, the descriptor's
	// status OK with its limit and nothing remaining, the rule named under
	// QuotaExceededKey. As under ShadowMode, the limiter decides as
	// always: all or nothing, so such a request counts on no limit.
	QuotaMode bool
	// ResponseHeaders adds response_headers_to_add to every decided
	// answer with a limit (the reference's LIMIT_RESPONSE_HEADERS_ENABLED):
	// the limit, remaining units and whole seconds to the window's end of
	// the descriptor that binds (one that refused, the longest wait first,
	// else the one with the least remaining), and on OVER_LIMIT,
	// Retry-After: the decision's wait in whole seconds, rounded up. Envoy
	// adds them to the response its client gets.
	ResponseHeaders bool
	// LimitHeader, RemainingHeader and ResetHeader name those fields; ""
	// is the reference's name (DefaultLimitHeader and the others).
	LimitHeader, RemainingHeader, ResetHeader string
	// MaxOverrides is how many distinct limit overrides (a descriptor's
	// limit: requests_per_unit, unit, unit_multiplier) the Server accepts
	// over its life; 0 is DefaultMaxOverrides. Each is a plan the limiter
	// keeps for good, so a new one beyond the cap is refused with
	// INVALID_ARGUMENT rather than let a client grow memory without bound.
	MaxOverrides int
	// OnError receives every failure to decide a request (a backend
	// failure wraps limiter.ErrBackend); nil logs them with
	// slog.Default() at Error, at most one line per cause a minute, each
	// counting the lines left out since ("suppressed"); a decision
	// skipped while the backend is marked down is not logged (the limiter
	// logs when it goes down and comes back). Errors name rules, never a
	// descriptor's values.
	OnError func(error)
	// ResponseDynamicMetadata adds to every answer's dynamic_metadata
	// what the reference's RESPONSE_DYNAMIC_METADATA does: the request's
	// domain ("domain"), its descriptors ("descriptors": each one's
	// entries as "key=value", its limit override as text, its
	// hits_addend), the request's hits_addend when not 0 ("hitsAddend"),
	// and the metadata of the limits of the descriptors answered OK
	// ("metadata"; Limit.Metadata of package config/envoy, merged: the
	// first descriptor's value of a key wins, and mappings under one key
	// merge). The descriptors' values go back to Envoy as it sent them;
	// RefusedKey and QuotaExceededKey are set beside them.
	ResponseDynamicMetadata bool
	// Metrics, when not nil, records every decision (see Metrics).
	Metrics *Metrics
	// NearLimitRatio is the share of a limit past which Metrics counts
	// hits as near_limit (the reference's NEAR_LIMIT_RATIO): above 0, at
	// most 1; 0 is NearLimitRatio.
	NearLimitRatio float64
}

// Server is an Envoy rate limit service (RLS v3) on a limiter.Limiter.
//
// It calls the limiter directly rather than through the request layer
// (package guard) that the HTTP and gRPC doors share: a guard decides a
// fixed list of rules, each at most once per request, and reports by
// rule, while an RLS request carries a variable list of descriptors,
// several of which may match one configured limit (with the same or
// other values), and its answer is one status per descriptor, in the
// request's order. The layer's failure policy is kept: a decision that
// fails answers UNAVAILABLE (or OK under Options.FailOpen), and never
// waits longer than the store's timeout (redisstore.WithTimeout) or the
// caller's deadline, whichever comes first.
//
// A Server is safe for concurrent use.
type Server struct {
	rlsv3.UnimplementedRateLimitServiceServer
	rules     func() rules // in force, for one request
	overrides *overrides
	opts      Options
	log       *failureLog // the default OnError
}

// NewServer returns a Server answering for configs' domains on lim,
// which must have the rules Limits(configs...) gives (it may have more).
// Two configs of one domain, or a limiter that lacks a rule or has one
// that differs, are an error wrapping ratelimit.ErrConfig.
func NewServer(lim *limiter.Limiter, configs []*Config, opts Options) (*Server, error) {
	if lim == nil {
		return nil, fmt.Errorf("%w: nil limiter", ratelimit.ErrConfig)
	}
	given := &configRules{lim: lim, byDomain: make(map[string]*Config, len(configs))}
	for _, c := range configs {
		if given.byDomain[c.Domain] != nil {
			return nil, fmt.Errorf("%w: domain %q is configured twice", ratelimit.ErrConfig, c.Domain)
		}
		given.byDomain[c.Domain] = c
	}
	have := map[string]limiter.Rule{}
	for _, r := range lim.Rules() {
		have[r.Name] = r
	}
	for _, want := range Limits(configs...) {
		switch got, ok := have[want.Name]; {
		case !ok:
			return nil, fmt.Errorf("%w: rule %q: the limiter has no rule of that name (build it on rls.Limits)", ratelimit.ErrConfig, want.Name)
		case got != want:
			return nil, fmt.Errorf("%w: rule %q: the limiter's rule of that name differs (limiter: %v; config: %v)", ratelimit.ErrConfig, want.Name, got.Algorithm, want.Algorithm)
		}
	}
	return newServer(func() rules { return given }, opts)
}

// newServer is a Server deciding on the rules inForce gives.
func newServer(inForce func() rules, opts Options) (*Server, error) {
	if opts.MaxOverrides < 0 {
		return nil, fmt.Errorf("%w: negative MaxOverrides %d", ratelimit.ErrConfig, opts.MaxOverrides)
	}
	if !(opts.NearLimitRatio >= 0 && opts.NearLimitRatio <= 1) {
		return nil, fmt.Errorf("%w: NearLimitRatio %v: allowed: above 0, at most 1 (0 for %v)", ratelimit.ErrConfig, opts.NearLimitRatio, NearLimitRatio)
	}
	if opts.NearLimitRatio == 0 {
		opts.NearLimitRatio = NearLimitRatio
	}
	return &Server{rules: inForce, overrides: newOverrides(opts.MaxOverrides), opts: withHeaderDefaults(opts), log: newFailureLog(time.Now)}, nil
}

// ShouldRateLimit decides all of req's descriptors together, in one
// limiter decision: the request is over the limit when any descriptor is,
// and then none of them consumes anything. See the package doc and
// docs/envoy.md for the fields of the answer.
func (s *Server) ShouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	if req.GetDomain() == "" {
		return nil, status.Error(codes.InvalidArgument, "ratelimit: the request names no domain")
	}
	if len(req.GetDescriptors()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "ratelimit: the request has no descriptors")
	}
	r := s.rules()
	p, err := newPlan(r.domain(req.GetDomain()), req, s.overrides)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	start := time.Now()
	d, err := p.decide(ctx, r.limiter())
	var end error // the caller's end, when it gave up on an undecided request: not a failure of Redis
	if err != nil && !d.Fallback {
		end = gaveUp(ctx)
	}
	s.opts.Metrics.decided(p, d, cmp.Or(end, err), time.Since(start), s.opts.NearLimitRatio)
	switch {
	case end != nil:
		return nil, status.FromContextError(end).Err()
	case err != nil && !d.Fallback:
		return s.failed(p, err)
	case err != nil:
		s.onError(err) // the fallback store decided
	}
	return p.response(d, s.opts), nil
}

// failed answers a request the limiter failed to decide while its caller
// waited.
func (s *Server) failed(p *plan, err error) (*rlsv3.RateLimitResponse, error) {
	s.onError(err)
	switch {
	case errors.Is(err, limiter.ErrCheck):
		return nil, status.Error(codes.Internal, "ratelimit: the limiter rejected the request's checks")
	case s.opts.FailOpen:
		return p.undecided(s.opts), nil
	}
	return nil, status.Errorf(codes.Unavailable, "ratelimit: the limiter could not decide (%s)", limiter.CauseOf(err))
}

func (s *Server) onError(err error) {
	if s.opts.OnError != nil {
		s.opts.OnError(err)
		return
	}
	s.log.failure(err)
}

// gaveUp is ctx's end once its caller gave up: its error, or
// context.DeadlineExceeded once its deadline has passed (a Redis call
// whose socket stopped at that deadline can fail with a network timeout a
// moment before ctx's own timer ends it); nil while the caller waits.
func gaveUp(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
