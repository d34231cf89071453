package guard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Config is what a door sets of the layer's behaviour; its zero value is
// every default. Each door offers these as its own options.
type Config[R any] struct {
	// FailClosed refuses (Failed) a request the limiter failed to decide;
	// by default it is admitted without a decision, so that an outage of
	// Redis is not an outage of the service. Either way the failure is
	// reported.
	FailClosed bool
	// ShadowMode admits every request a limit refuses (the event's Shadow
	// is set), for rolling limits out.
	ShadowMode bool
	// Exempt takes requests out of limiting when any of them accepts one.
	Exempt []func(R) bool
	// Hook, when set, receives an Event after every decision and failure,
	// on the request's goroutine: it must be fast.
	Hook func(Event)
	// OnError receives every backend failure (wrapping limiter.ErrBackend)
	// and every request refused as NoIdentity, BadCost or Misconfigured.
	// nil logs them (see the package doc, "Logs").
	OnError func(R, error)
	// Route names a request's route for events and logs (an HTTP route
	// pattern, a gRPC full method); never anything a client chooses
	// freely. nil names none.
	Route func(R) string
	// SlotRetry is the wait advertised for a concurrency limit (see
	// Result.Decision); 0 means 1 s.
	SlotRetry time.Duration
}

// Guard decides the rules of one door for each request: one stacked,
// all-or-nothing decision on a limiter.Limiter. It is safe for concurrent
// use.
type Guard[R any] struct {
	lim      *limiter.Limiter
	rules    []Rule[R]
	inFlight []bool // per rule: its algorithm holds slots
	cfg      Config[R]
	logs     *logs
}

// New returns a Guard deciding rules on lim, which must have each rule's
// limiter.Rule as Limits(rules) gives it (lim may have more). Invalid
// rules or a mismatch with lim are an error wrapping ratelimit.ErrConfig
// that names the rule.
func New[R any](lim *limiter.Limiter, rules []Rule[R], c Config[R]) (*Guard[R], error) {
	if lim == nil {
		return nil, fmt.Errorf("%w: nil limiter", ratelimit.ErrConfig)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ratelimit.ErrConfig)
	}
	if len(rules) > exact.MaxChecks {
		return nil, fmt.Errorf("%w: rule %q: %d rules, where a request is decided against at most %d", ratelimit.ErrConfig, rules[exact.MaxChecks].Name, len(rules), exact.MaxChecks)
	}
	if c.SlotRetry < 0 {
		return nil, fmt.Errorf("%w: concurrency retry %v is negative", ratelimit.ErrConfig, c.SlotRetry)
	}
	if c.SlotRetry == 0 {
		c.SlotRetry = time.Second
	}
	have := make(map[string]*limiter.Rule, len(rules)) // the limiter's, by name; nil: none
	for i := range rules {
		if err := rules[i].validate(); err != nil {
			return nil, err
		}
		if _, dup := have[rules[i].Name]; dup {
			return nil, fmt.Errorf("%w: rule %q: two rules of that name", ratelimit.ErrConfig, rules[i].Name)
		}
		have[rules[i].Name] = nil
	}
	given := lim.Rules()
	for i := range given {
		if _, ok := have[given[i].Name]; ok {
			have[given[i].Name] = &given[i]
		}
	}
	g := &Guard[R]{lim: lim, rules: rules, inFlight: make([]bool, len(rules)), cfg: c, logs: newLogs(time.Now)}
	for i := range rules {
		r := &rules[i].Rule
		switch l := have[r.Name]; {
		case l == nil:
			return nil, fmt.Errorf("%w: rule %q: the limiter has no rule of that name (build it on guard.Limits of the rules)", ratelimit.ErrConfig, r.Name)
		case *l != *r:
			return nil, fmt.Errorf("%w: rule %q: the limiter's rule of that name differs (limiter: %+v; door: %+v)", ratelimit.ErrConfig, r.Name, *l, *r)
		}
		g.inFlight[i] = algorithms.PolicyOf(r.Algorithm).InFlight()
	}
	return g, nil
}

// Decide decides req: exemptions, then each rule's identity, cost and
// plan, then one decision of the rules that apply, the failure policy,
// and a queue's wait. ctx is the request's: a client that goes away
// while it is decided or queued makes it Canceled. A Result whose
// Outcome is Admitted must be finished with Finish once the request has
// ended; every other Result needs nothing more.
func (g *Guard[R]) Decide(ctx context.Context, req R) Result {
	for _, exempt := range g.cfg.Exempt {
		if exempt(req) {
			return Result{Outcome: Admitted}
		}
	}
	var checkBuf [4]limiter.Check
	var ruleBuf [4]int
	checks, rules, res := g.checks(req, checkBuf[:0], ruleBuf[:0])
	if res.Outcome != Admitted || len(checks) == 0 {
		if res.Err != nil {
			g.fail(ctx, req, res.Err, Event{Rules: []string{res.Rule}})
		}
		return res
	}
	var start time.Time
	if g.cfg.Hook != nil {
		start = time.Now()
	}
	d, err := g.lim.Decide(ctx, checks...)
	if err != nil && !d.Fallback {
		return g.undecided(ctx, req, err, checks, start)
	}
	return g.decided(ctx, req, d, err, checks, rules, start)
}

// checks appends req's checks to checks and the index of each one's rule
// to rules. A request that cannot be decided gets its Result.
func (g *Guard[R]) checks(req R, checks []limiter.Check, rules []int) ([]limiter.Check, []int, Result) {
	for i := range g.rules {
		r := &g.rules[i]
		if r.Skip != nil && r.Skip(req) {
			continue
		}
		id, err := identity(r.Identity, req)
		if err != nil && r.AltIdentity != nil && !errors.Is(err, ratelimit.ErrConfig) {
			id, err = identity(r.AltIdentity, req)
		}
		switch {
		case errors.Is(err, ratelimit.ErrConfig):
			return nil, nil, Result{Outcome: Misconfigured, Rule: r.Name, Err: &keyError{rule: r.Name, err: err}}
		case err != nil && r.Optional:
			continue
		case err != nil:
			return nil, nil, Result{Outcome: NoIdentity, Rule: r.Name, Err: &keyError{rule: r.Name, err: err}}
		}
		cost := 1
		if r.Cost != nil {
			if cost = r.Cost(req); cost < 0 {
				return nil, nil, Result{Outcome: BadCost, Rule: r.Name, Err: fmt.Errorf("rule %q: %w: %d", r.Name, errBadCost, cost)}
			}
		}
		c := limiter.Check{Rule: r.Name, Identity: id, Cost: cost}
		if r.Plan != nil {
			c.Plan = r.Plan(req)
		}
		checks = append(checks, c)
		rules = append(rules, i)
	}
	return checks, rules, Result{Outcome: Admitted}
}

// identity runs fn, turning an empty identity, and any failure of fn's
// own, into ratelimit.ErrNoKey; a misconfiguration (ratelimit.ErrConfig)
// stays one.
func identity[R any](fn func(R) (string, error), req R) (string, error) {
	id, err := fn(req)
	switch {
	case err != nil && !errors.Is(err, ratelimit.ErrNoKey) && !errors.Is(err, ratelimit.ErrConfig):
		err = fmt.Errorf("%w: %w", ratelimit.ErrNoKey, err)
	case err == nil && id == "":
		err = fmt.Errorf("%w: the key function returned an empty identity", ratelimit.ErrNoKey)
	}
	return id, err
}

// undecided is the Result of a request whose checks the limiter did not
// decide: an invalid Plan, a client gone, or a backend failure, which the
// failure policy answers.
func (g *Guard[R]) undecided(ctx context.Context, req R, err error, checks []limiter.Check, start time.Time) Result {
	e := Event{Rules: ruleNames(checks), Duration: since(start)}
	switch {
	case errors.Is(err, limiter.ErrCheck): // an invalid Plan
		g.fail(ctx, req, err, e)
		return Result{Outcome: Misconfigured, Err: err}
	case fault.CallerEnded(ctx, err):
		// The client went away, or its deadline passed, while its request
		// was decided: not a failure of the backend, and nobody to answer.
		e.Err = cmp.Or(ctx.Err(), context.DeadlineExceeded)
		g.report(ctx, req, e)
		return Result{Outcome: Canceled, Err: e.Err}
	}
	g.fail(ctx, req, err, e)
	if g.cfg.FailClosed {
		return Result{Outcome: Failed, Err: err}
	}
	return Result{Outcome: Admitted, Err: err}
}

// ended reports whether err is a context's end: cancelled, or past its
// deadline.
func ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fail reports a failure to the error handler and the hook.
func (g *Guard[R]) fail(ctx context.Context, req R, err error, e Event) {
	g.onError(req, err)
	e.Err = err
	g.report(ctx, req, e)
}

// onError hands err to the error handler, or the default log.
func (g *Guard[R]) onError(req R, err error) {
	if g.cfg.OnError != nil {
		g.cfg.OnError(req, err)
		return
	}
	g.logs.failure(g.route(req), err)
}

// route is req's route, or "".
func (g *Guard[R]) route(req R) string {
	if g.cfg.Route == nil {
		return ""
	}
	return g.cfg.Route(req)
}

// report classifies e and gives it to the hook, if any.
func (g *Guard[R]) report(ctx context.Context, req R, e Event) {
	if g.cfg.Hook != nil {
		e.Context, e.Route = ctx, g.route(req)
		e.classify()
		g.cfg.Hook(e)
	}
}

func ruleNames(checks []limiter.Check) []string {
	names := make([]string, len(checks))
	for i, c := range checks {
		names[i] = c.Rule
	}
	return names
}

// since is the time since start, 0 for a zero start.
func since(start time.Time) time.Duration {
	if start.IsZero() {
		return 0
	}
	return time.Since(start)
}
