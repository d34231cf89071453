package guard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Every outcome, cause and backend state an event can carry, and each
// rule's outcome.
func TestClassify(t *testing.T) {
	allow, deny := limiter.RuleResult{Result: algorithms.Result{Allowed: true}}, limiter.RuleResult{}
	unasked := limiter.RuleResult{Result: algorithms.Result{Allowed: true}, Undecided: true}
	wouldDeny, shadowAllows := limiter.RuleResult{Shadow: true}, limiter.RuleResult{Result: algorithms.Result{Allowed: true}, Shadow: true}
	decided := func(allowed bool, results ...limiter.RuleResult) limiter.Decision {
		return limiter.Decision{Allowed: allowed, Results: results}
	}
	cached := decided(false, unasked, deny)
	cached.Cached = true
	fellBack := decided(false, allow, deny)
	fellBack.Fallback = true
	timeout := fmt.Errorf("%w: %w", limiter.ErrBackend, context.DeadlineExceeded)
	for _, tc := range []struct {
		name                  string
		e                     Event
		outcome, cause, state string
		rule0, rule1          string
	}{
		{"allowed", Event{Decision: decided(true, allow, allow)}, "allowed", "", "up", "allowed", "allowed"},
		{"denied by the second rule", Event{Decision: decided(false, allow, deny)}, "denied", "", "up", "allowed", "denied"},
		{"cached denial", Event{Decision: cached}, "cached_denied", "", "", "undecided", "cached_denied"},
		{"denied by a leased rule's pool", Event{Decision: decided(false, unasked, deny)}, "denied", "", "up", "undecided", "denied"},
		{"shadow", Event{Decision: decided(false, allow, deny), Shadow: true}, "shadow_allowed", "", "up", "allowed", "shadow_allowed"},
		{"shadow, a leased rule's pool", Event{Decision: decided(false, unasked, deny), Shadow: true}, "shadow_allowed", "", "up", "undecided", "shadow_allowed"},
		{"a shadow rule's would-be refusal", Event{Decision: decided(true, allow, wouldDeny)}, "allowed", "", "up", "allowed", "would_deny"},
		{"a shadow rule's would-be refusal, denied", Event{Decision: decided(false, deny, wouldDeny)}, "denied", "", "up", "denied", "would_deny"},
		{"a shadow rule allows, denied", Event{Decision: decided(false, deny, shadowAllows)}, "denied", "", "up", "denied", "allowed"},
		{"fallback after a timeout", Event{Decision: fellBack, Err: timeout}, "fallback_denied", "timeout", "fallback", "fallback_allowed", "fallback_denied"},
		{"timeout", Event{Err: timeout}, "error", "timeout", "down", "error", "error"},
		{"marked down", Event{Err: fmt.Errorf("%w: %w", limiter.ErrBackend, limiter.ErrUnavailable)}, "error", "unavailable", "down", "error", "error"},
		{"reply", Event{Err: fmt.Errorf("%w: %w", limiter.ErrBackend, errors.New("redis: client is closed"))}, "error", "other", "down", "error", "error"},
		{"error reply", Event{Err: fmt.Errorf("%w: %w", limiter.ErrBackend, proto("LOADING"))}, "error", "reply", "", "error", "error"},
		{"network", Event{Err: fmt.Errorf("%w: %w", limiter.ErrBackend, &net.OpError{Op: "dial", Err: errors.New("refused")})}, "error", "refused", "down", "error", "error"},
		{"connection lost", Event{Err: fmt.Errorf("%w: %w", limiter.ErrBackend, &net.OpError{Op: "read", Err: errors.New("reset")})}, "error", "network", "down", "error", "error"},
		{"no identity", Event{Err: keyfunc.ErrNoKey}, "no_identity", "", "", "no_identity", "no_identity"},
		{"bad cost", Event{Err: errBadCost}, "no_identity", "", "", "no_identity", "no_identity"},
		{"client gone", Event{Err: context.Canceled}, "canceled", "", "", "canceled", "canceled"},
	} {
		e := tc.e
		e.Rules = []string{"a", "b"}
		e.classify()
		got := [5]string{e.Outcome, string(e.Cause), string(e.Backend), e.RuleOutcome(0), e.RuleOutcome(1)}
		if want := [5]string{tc.outcome, tc.cause, tc.state, tc.rule0, tc.rule1}; got != want {
			t.Errorf("%s: got %q, want %q", tc.name, got, want)
		}
	}
}

// proto is an error reply from Redis.
type proto string

func (p proto) Error() string { return string(p) }
func (proto) RedisError()     {}

// KeyHashes are the same for one identity within the process and differ
// between identities, and an unkeyed hash of the identities a dictionary
// would hold (an IPv4 address, here) does not find them: neither FNV-1a
// 64, which they were, nor SHA-256 or an HMAC under a key of zeros.
func TestKeyHashesAreKeyed(t *testing.T) {
	checks := []limiter.Check{{Identity: "203.0.113.9"}, {Identity: "203.0.113.10"}, {Identity: "203.0.113.9"}}
	h := keyHashes(checks)
	if len(h) != 3 || len(h[0]) != 16 || h[0] != h[2] || h[0] == h[1] {
		t.Fatalf("hashes %q: want 16 hex digits, one per identity", h)
	}
	id := []byte(checks[0].Identity)
	fnv1a := fnv.New64a()
	fnv1a.Write(id)
	plain := sha256.Sum256(id)
	zeros := hmac.New(sha256.New, make([]byte, 32))
	zeros.Write(id)
	for name, unkeyed := range map[string]string{
		"FNV-1a 64":        strconv.FormatUint(fnv1a.Sum64(), 16),
		"SHA-256":          hex.EncodeToString(plain[:8]),
		"HMAC under zeros": hex.EncodeToString(zeros.Sum(nil)[:8]),
	} {
		if h[0] == unkeyed {
			t.Errorf("the hash of %q is its %s", id, name)
		}
	}
}
