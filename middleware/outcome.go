package middleware

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// The outcomes of a request (Event.Outcome), for metrics.
const (
	outcomeAllowed         = "allowed"
	outcomeDenied          = "denied"
	outcomeCachedDenied    = "cached_denied"
	outcomeShadowAllowed   = "shadow_allowed"
	outcomeWouldDeny       = "would_deny" // a rule's: a shadow rule's would-be refusal (see RuleOutcome)
	outcomeFallbackAllowed = "fallback_allowed"
	outcomeFallbackDenied  = "fallback_denied"
	outcomeError           = "error"
	outcomeNoIdentity      = "no_identity"
	outcomeCanceled        = "canceled"
	outcomeUndecided       = "undecided" // a rule's: not asked (see RuleOutcome)
)

// classify fills in e's Outcome, Cause and Backend from what it carries.
func (e *Event) classify() {
	d := e.Decision
	switch {
	case errors.Is(e.Err, keyfunc.ErrNoKey) || errors.Is(e.Err, errBadCost):
		e.Outcome = outcomeNoIdentity
		return
	case errors.Is(e.Err, context.Canceled) && !d.Fallback:
		e.Outcome = outcomeCanceled // the client went away: Redis is not at fault
		return
	case e.Err != nil:
		e.Cause = cause(e.Err)
		if e.Cause != "reply" { // any failure but a Redis reply means Redis is away
			e.Backend = "down"
		}
		if !d.Fallback {
			e.Outcome = outcomeError
			return
		}
	}
	e.Outcome = verdict(d, e.Shadow, d.Allowed)
	switch {
	case d.Fallback:
		e.Backend = "fallback"
	case !d.Cached:
		e.Backend = "up"
	}
}

// verdict names a decided verdict given how the decision was made.
func verdict(d limiter.Decision, shadow, allowed bool) string {
	switch {
	case d.Fallback && allowed:
		return outcomeFallbackAllowed
	case d.Fallback:
		return outcomeFallbackDenied
	case allowed:
		return outcomeAllowed
	case d.Cached:
		return outcomeCachedDenied
	case shadow:
		return outcomeShadowAllowed
	}
	return outcomeDenied
}

// RuleOutcome is the outcome of the i-th rule of e.Rules: the verdict of
// its own result when the request was decided (a rule that allowed a
// request another rule denied is "allowed", or "fallback_allowed"),
// "undecided" when it was not asked because another rule denied the
// request first without Redis (a leased rule's local denial, or the deny
// cache; see limiter.RuleResult.Undecided), "would_deny" for a shadow
// rule (Rule.Shadow) that would have refused the request, else e.Outcome.
func (e Event) RuleOutcome(i int) string {
	switch {
	case e.Outcome == outcomeError || i >= len(e.Decision.Results):
		return e.Outcome
	case e.Decision.Results[i].Undecided:
		return outcomeUndecided
	case e.Decision.Results[i].Shadow && !e.Decision.Results[i].Allowed:
		return outcomeWouldDeny
	}
	return verdict(e.Decision, e.Shadow, e.Decision.Results[i].Allowed)
}

// cause classifies a Redis failure (see Event.Cause).
func cause(err error) string {
	var reply redis.Error
	var netErr net.Error
	switch {
	case errors.Is(err, limiter.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &reply):
		return "reply"
	case errors.As(err, &netErr):
		return "network"
	}
	return "other"
}

// report classifies e and gives it to the hook, if any.
func (m *mw) report(e Event) {
	if m.cfg.hook != nil {
		e.classify()
		m.cfg.hook(e)
	}
}
