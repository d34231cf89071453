package guard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Event describes one decision or failure, for metrics (Config.Hook).
type Event struct {
	// Context is the request's.
	Context context.Context
	// Route is the request's route (Config.Route): an HTTP route pattern,
	// a gRPC full method; "" when the door names none. A gRPC server with
	// an unknown-service handler (a proxy) reports the method its client
	// sent, any string: a hook that keeps routes (a label, a map) must
	// bound how many, as prommetrics does.
	Route string
	// Decision is the outcome, one result per rule that took part (rules
	// skipped for this request are absent); each result names its rule.
	Decision limiter.Decision
	// KeyHashes[i] is a short hash (16 hex digits) of the identity of
	// Decision.Results[i], the same for one identity throughout the
	// process: keyed with a secret the process draws when it starts
	// (HMAC-SHA-256), so that a log of hashes does not give the
	// identities back, even ones as few as the IPv4 addresses (an
	// unkeyed hash of each can be computed in minutes). Hashes from two
	// processes do not match.
	KeyHashes []string
	// Shadow is true when shadow mode let a denied request through.
	Shadow bool
	// Err is the failure, if any: a key function's, or the backend's
	// (wrapping limiter.ErrBackend). Decision is then empty, unless the
	// fallback store decided (Decision.Fallback). It is context.Canceled,
	// and no ErrBackend, when the request's client went away before its
	// decision was made.
	Err error
	// Rules names the rules the request was checked against (or, for a
	// key function's failure, the rule whose key failed), also when
	// Decision is empty.
	Rules []string
	// Duration is how long the decision took (0 for a request that was
	// not decided).
	Duration time.Duration
	// Outcome names what happened to the request, for metrics: "allowed",
	// "denied", "cached_denied" (the deny cache answered),
	// "shadow_allowed" (shadow mode let a denied request through),
	// "fallback_allowed" and "fallback_denied" (the fallback store
	// decided), "error" (the backend failed, or the server is
	// misconfigured; the failure policy applied), "no_identity" (a key
	// function found none, or a Cost was negative), "canceled" (the client
	// went away before its decision). RuleOutcome says it per rule.
	Outcome string
	// Cause classifies Err when the backend failed (whether or not the
	// fallback decided); "" otherwise.
	Cause limiter.Cause
	// Backend is the state of the backend the event shows; "" when it
	// shows none (a denial from the deny cache, a request without an
	// identity, a client gone).
	Backend Backend
}

// Backend is the state of the store an Event shows.
type Backend string

// The states of the store.
const (
	BackendUp       Backend = "up"
	BackendDown     Backend = "down"
	BackendFallback Backend = "fallback" // the fallback store decided
)

// The outcomes of an Event, for metrics.
const (
	outcomeAllowed         = "allowed"
	outcomeDenied          = "denied"
	outcomeCachedDenied    = "cached_denied"
	outcomeShadowAllowed   = "shadow_allowed"
	outcomeWouldDeny       = "would_deny" // a rule's: a shadow rule's would-be refusal
	outcomeFallbackAllowed = "fallback_allowed"
	outcomeFallbackDenied  = "fallback_denied"
	outcomeError           = "error"
	outcomeNoIdentity      = "no_identity"
	outcomeCanceled        = "canceled"
	outcomeUndecided       = "undecided" // a rule's: not asked
)

// classify fills in e's Outcome, Cause and Backend from what it carries.
func (e *Event) classify() {
	d := e.Decision
	switch {
	case errors.Is(e.Err, ratelimit.ErrNoKey) || errors.Is(e.Err, errBadCost):
		e.Outcome = outcomeNoIdentity
		return
	case ended(e.Err) && !d.Fallback && !errors.Is(e.Err, limiter.ErrBackend):
		e.Outcome = outcomeCanceled // the client went away or gave up: the backend is not at fault
		return
	case errors.Is(e.Err, ratelimit.ErrConfig) || errors.Is(e.Err, limiter.ErrCheck):
		e.Outcome = outcomeError // the server's misconfiguration: the backend is not at fault
		return
	case e.Err != nil:
		e.Cause = limiter.CauseOf(e.Err)
		if e.Cause != limiter.CauseReply { // any failure but a reply means the backend is away
			e.Backend = BackendDown
		}
		if !d.Fallback {
			e.Outcome = outcomeError
			return
		}
	}
	e.Outcome = verdict(d, e.Shadow, d.Allowed)
	switch {
	case d.Fallback:
		e.Backend = BackendFallback
	case !d.Cached:
		e.Backend = BackendUp
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
// request first without the store (a leased rule's local denial, or the
// deny cache; see limiter.RuleResult.Undecided), "would_deny" for a
// shadow rule (limiter.Rule.Shadow) that would have refused the request,
// else e.Outcome.
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

func keyHashes(checks []limiter.Check) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		h := hmac.New(sha256.New, hashKey[:])
		h.Write([]byte(c.Identity))
		out[i] = hex.EncodeToString(h.Sum(nil)[:8])
	}
	return out
}

// hashKey is the process's secret for KeyHashes.
var hashKey = func() (key [32]byte) {
	rand.Read(key[:]) // never fails (crypto/rand)
	return key
}()
