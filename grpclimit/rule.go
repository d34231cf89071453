package grpclimit

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Rule is one limit of a Server: middleware.Rule's model, with gRPC's
// methods, codes and messages where HTTP has routes, statuses and bodies.
type Rule struct {
	// Name identifies the rule in keys, the ratelimit metadata and
	// QuotaFailure: 1 to 64 bytes of [A-Za-z0-9._-], unique within the
	// Server.
	Name string
	// Methods are the calls the rule limits: full method names
	// ("/pkg.Service/Method") or a service's every method
	// ("/pkg.Service/*"). None means every call the Server sees.
	Methods []string
	// Key extracts the identity the rule limits from the call's request
	// view (see the package doc): keyfunc.IP() for the peer,
	// keyfunc.ClientIP for a client behind trusted proxies,
	// keyfunc.Header("x-api-key") for a metadata value (hashed),
	// keyfunc.Route() for the full method, keyfunc.Constant for one
	// shared limit, or Key(fn) for a function of the call's context.
	Key keyfunc.KeyFunc
	// AltKey supplies the identity when Key finds none.
	AltKey keyfunc.KeyFunc
	// Optional makes a call for which Key and AltKey find no identity sit
	// this rule out. By default such a call is refused with
	// codes.Unauthenticated.
	Optional bool
	// Algorithm is the limit. An algorithms.Concurrency holds its slot
	// until the call ends: a unary handler returns, a stream's handler
	// returns (the client closed, cancelled or hung up).
	Algorithm algorithms.Algorithm
	// Plan, when set, chooses the limit per call (a customer's plan); nil
	// means Algorithm. An invalid one refuses the call with codes.Internal.
	Plan func(ctx context.Context, method string) algorithms.Algorithm
	// Cost is the call's weight for this rule, charged when it starts (a
	// stream: when it opens); nil means 1. 0 checks without consuming;
	// negative refuses the call with codes.InvalidArgument.
	Cost func(ctx context.Context, method string) int
	// MessageCost, when set, also charges each message a stream receives
	// from its client (a client-streaming or bidirectional call): one
	// decision per message, for the rules that have a MessageCost, at the
	// message's weight (0 charges nothing; negative refuses). A refused
	// message ends RecvMsg with the refusal (codes.ResourceExhausted with
	// its RetryInfo), which the handler returns. Not for a concurrency
	// limit.
	MessageCost func(ctx context.Context, method string, msg any) int
	// Settle, when set, is the call's final cost once it has ended, from
	// its code (codes.Unknown when its handler panicked): the difference
	// from Cost is given back or charged (see limiter.Limiter.Settle). A
	// rule that counts only failed logins returns 1 for
	// codes.Unauthenticated and 0 otherwise. Negative means 0.
	Settle func(ctx context.Context, method string, code codes.Code) int
	// Blockable, Penalty and Lease are limiter.Rule's.
	Blockable bool
	Penalty   time.Duration
	Lease     time.Duration
	// Shadow decides and counts the rule but never lets it refuse a call
	// (see middleware.Rule): to roll a limit out, watch its would-be
	// refusals first. Each is reported to the hook (RuleOutcome
	// "would_deny") and logged, at most one line per rule a minute. A
	// shadow rule is left out of the ratelimit metadata and of a
	// refusal's QuotaFailure and message. Not with Lease. WithShadowMode,
	// in contrast, lets every rule's refusals through.
	Shadow bool
}

// Key is a key function of a call's context and full method, for
// Rule.Key: metadata.FromIncomingContext(ctx) has the call's metadata and
// peer.FromContext(ctx) its peer. An empty identity is none (see
// Rule.Optional).
func Key(fn func(ctx context.Context, method string) (string, error)) keyfunc.KeyFunc {
	return func(r *http.Request) (string, error) {
		return fn(r.Context(), r.Pattern)
	}
}

// LimiterRules returns the limiter's rules behind a Server of rules, as
// middleware.LimiterRules does for a middleware: New takes a limiter built
// on them, and an operator tool built on the same rules value reaches the
// same state.
func LimiterRules(rules []Rule) []limiter.Rule {
	mrules := make([]middleware.Rule, len(rules))
	for i, r := range rules {
		mrules[i] = r.middlewareRule()
	}
	return middleware.LimiterRules(mrules)
}

// middlewareRule is r as a middleware rule, without the functions of a
// call (Methods, Plan, Cost, Settle) that httpRules adapts to a request
// view: the one place a field of r reaches the middleware, and through
// it the limiter.
func (r Rule) middlewareRule() middleware.Rule {
	return middleware.Rule{Name: r.Name, Key: r.Key, AltKey: r.AltKey, Optional: r.Optional, Algorithm: r.Algorithm,
		Blockable: r.Blockable, Penalty: r.Penalty, Lease: r.Lease, Shadow: r.Shadow}
}

// httpRules returns the middleware rules that decide rules when a call
// starts, and, for the rules with a MessageCost, those that decide each
// message a stream receives (nil when no rule has one).
func httpRules(rules []Rule) (open, messages []middleware.Rule, err error) {
	for _, r := range rules {
		methods, err := compile(r.Methods)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: rule %q: %w", ratelimit.ErrConfig, r.Name, err)
		}
		mr := r.middlewareRule()
		if len(r.Methods) > 0 {
			mr.Skip = func(req *http.Request) bool { return !methods.match(req.Pattern) }
		}
		if plan := r.Plan; plan != nil {
			mr.Plan = func(req *http.Request) algorithms.Algorithm { return plan(req.Context(), req.Pattern) }
		}
		if r.MessageCost != nil {
			if algorithms.PolicyOf(r.Algorithm).Unit != "" {
				return nil, nil, fmt.Errorf("%w: rule %q: a MessageCost on a limit of calls in flight", ratelimit.ErrConfig, r.Name)
			}
			m, cost := mr, r.MessageCost
			m.Cost = func(req *http.Request) int { return cost(req.Context(), req.Pattern, callOf(req).msg) }
			messages = append(messages, m)
		}
		if cost := r.Cost; cost != nil {
			mr.Cost = func(req *http.Request) int { return cost(req.Context(), req.Pattern) }
		}
		if settle := r.Settle; settle != nil {
			mr.Settle = func(req *http.Request, _ int, _ int64) int {
				return settle(req.Context(), req.Pattern, callOf(req).code)
			}
		}
		open = append(open, mr)
	}
	return open, messages, nil
}

// methods matches full method names against patterns: exact names, and
// services ("/pkg.Service/*").
type methods struct {
	exact    map[string]bool
	services []string // "/pkg.Service/"
}

// compile validates patterns: each a full method name or a service's
// pattern.
func compile(patterns []string) (methods, error) {
	m := methods{exact: make(map[string]bool)}
	for _, p := range patterns {
		svc, method, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if !strings.HasPrefix(p, "/") || !ok || svc == "" || method == "" || strings.Contains(method, "/") ||
			(strings.Contains(method, "*") && method != "*") || strings.Contains(svc, "*") {
			return m, fmt.Errorf("method pattern %q is neither /pkg.Service/Method nor /pkg.Service/*", p)
		}
		if method == "*" {
			m.services = append(m.services, p[:len(p)-1])
		} else {
			m.exact[p] = true
		}
	}
	return m, nil
}

// match reports whether method matches one of m's patterns.
func (m methods) match(method string) bool {
	if m.exact[method] {
		return true
	}
	for _, s := range m.services {
		if strings.HasPrefix(method, s) {
			return true
		}
	}
	return false
}
