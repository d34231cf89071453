package grpclimit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
)

// Rule is one limit of a Server: the request layer's rule of a Call (see
// guard.Rule: the limiter.Rule, embedded, and Identity, AltIdentity, Optional,
// Plan, Cost, Skip and Settle, functions of the Call). Settle's guard.End
// has the call's code as its Status (codes.Unknown when its handler
// panicked). An algorithms.Concurrency holds its slot until the call
// ends: a unary handler returns, a stream's handler returns (the client
// closed, cancelled or hung up). A rule limits every call the Server
// sees, unless WithMethods names its methods; WithMessageCost also
// charges the messages a stream receives.
type Rule = guard.Rule[*Call]

// layerRules returns the layer's rules that decide rules when a call
// starts (each limited to its methods, c.methods), and, for the rules
// with a message cost (c.messageCost), those that decide each message a
// stream receives (nil when no rule has one).
func layerRules(rules []Rule, c *settings) (open, messages []Rule, err error) {
	known := make(map[string]bool, len(rules))
	for _, r := range rules {
		known[r.Name] = true
		if ms, ok := c.methods[r.Name]; ok {
			skip := r.Skip
			r.Skip = func(c *Call) bool { return !ms.match(c.method) || (skip != nil && skip(c)) }
		}
		if mc := c.messageCost[r.Name]; mc != nil {
			if algorithms.PolicyOf(r.Algorithm).InFlight() {
				return nil, nil, fmt.Errorf("%w: rule %q: a message cost on a limit of calls in flight", ratelimit.ErrConfig, r.Name)
			}
			m := r
			m.Cost = func(c *Call) int { return mc(c, c.message) }
			m.Settle = nil
			messages = append(messages, m)
		}
		open = append(open, r)
	}
	for _, name := range slices.Sorted(maps.Keys(c.named)) {
		if !known[name] {
			return nil, nil, fmt.Errorf("%w: rule %q: %s names no rule of the Server", ratelimit.ErrConfig, name, c.named[name])
		}
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
