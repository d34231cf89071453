package parse

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
)

// remoteAddress is the key of the descriptor entry Envoy's remote_address
// action gives, the client's address: what an ip identity reads on an
// Envoy stack.
const RemoteAddress = "remote_address"

// domain reads the domain of stack s, given at n, among the stack's
// fields m: a stack with a domain is an Envoy stack, decided by package
// rls for the descriptors of that domain, so it has none of the fields
// of the other doors.
func (p *parser) domain(s *Stack, n *yaml.Node, m map[string]*yaml.Node) {
	field := join(s.field, "domain")
	s.Domain, _ = p.str(n, field, "an Envoy domain (e.g. edge)")
	s.domainNode = n
	why := map[string]string{
		"match":   "Envoy chooses the stack by the request's domain",
		"methods": "Envoy chooses the stack by the request's domain",
		"fail":    "Envoy's failure_mode_deny decides when the service cannot (rls.Options.FailOpen answers OK instead)",
		"exempt":  "Envoy's route configuration decides which requests it asks about",
	}
	for _, name := range stackFields {
		if v := m[name]; v != nil && why[name] != "" {
			p.fail(v, join(s.field, name), "found %s on an Envoy stack (one with a domain); allowed: none (%s)", name, why[name])
		}
	}
}

// EntryKeys are the keys of the descriptor entries k reads, in order: a
// descriptor's key, remote_address for ip, a join's parts' in turn; nil
// when k reads something else.
func (k *Key) EntryKeys() []string {
	switch k.Kind {
	case "descriptor":
		return []string{k.Arg}
	case "ip":
		return []string{RemoteAddress}
	case "join":
		var keys []string
		for _, part := range k.Parts {
			keys = append(keys, part.EntryKeys()...)
		}
		return keys
	}
	return nil
}

// Signature is keys as one string, a domain's index of its rules.
func Signature(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strconv.Quote(k))
	}
	return b.String()
}

// envoyStack reports what an Envoy stack s, of rules names (each once),
// cannot decide: a domain
// another stack has (domains holds them), a rule with an alt_key (a
// descriptor carries its entries or matches no rule), two rules that
// read the same descriptor keys (a descriptor has one status, so one
// rule), a plan by a descriptor key the rule's key does not read, and an
// algorithm an RLS call cannot use.
func (p *parser) envoyStack(s *Stack, names []string, rules map[string]*Rule, domains map[string]*Stack) {
	if s.Door() != EnvoyDoor || s.Domain == "" {
		return
	}
	if first, dup := domains[s.Domain]; dup {
		p.fail(s.domainNode, join(s.field, "domain"), "found %q again; allowed: a domain no other stack has (first at line %d)", s.Domain, first.domainNode.Line)
	}
	domains[s.Domain] = s
	byKeys := map[string]string{}
	for _, name := range names {
		r := rules[name]
		if r == nil || r.Key == nil || r.Key.Doors()&EnvoyDoor == 0 {
			continue // reported already
		}
		if r.AltKey != nil {
			p.fail(r.AltKey.node, r.AltKey.field, "found an alt_key in rule %q of Envoy stack %q; allowed: none (a rule applies to the descriptors that carry its key's entries)", name, s.Name)
		}
		keys := r.Key.EntryKeys()
		sig := Signature(keys)
		if other, dup := byKeys[sig]; dup {
			p.fail(r.Key.node, r.Key.field, "found rule %q reading descriptor keys %s, as rule %q does in Envoy stack %q; allowed: one rule per descriptor keys in a stack (a descriptor has one status)",
				name, listed(keys), other, s.Name)
		}
		byKeys[sig] = name
		p.envoyAlgorithm(r.Algorithm, r.algorithmNode, r.field, name)
		if r.Plans == nil || r.Plans.By == nil {
			continue
		}
		for value, alg := range r.Plans.Values {
			p.envoyAlgorithm(alg, r.Plans.nodes[value], join(join(join(r.field, "plans"), "values"), value), name)
		}
		if by := r.Plans.By; by.Kind == "descriptor" && !slices.Contains(keys, by.Arg) {
			p.fail(by.node, by.field, "found %q, a key rule %q does not read (%s); allowed: one of its key's descriptor keys", by.Arg, name, listed(keys))
		}
	}
}

// envoyAlgorithm reports an algorithm a of rule name, at n (the value of
// the algorithm's field under within), that an RLS call cannot use (rls
// refuses them in its own format, for the same reasons).
func (p *parser) envoyAlgorithm(a algorithms.Algorithm, n *yaml.Node, within, name string) {
	d, err := algo.Describe(a)
	if err != nil {
		return // an invalid algorithm is a problem of its own field
	}
	var field, why string
	switch {
	case d.Facts.InFlight:
		field, why = "concurrency", "an RLS call takes a slot and no call gives it back"
	case d.Facts.Delays:
		field, why = "queue", "a queue admits by delaying, and Envoy waits milliseconds for an answer"
	case d.ClientWindow:
		field, why = "fixed_window", "an anchored window ends at a time of each client's, which an RLS response cannot tell Envoy"
	}
	if why != "" && n != nil {
		p.fail(n, join(within, field), "found %v in rule %q of an Envoy stack: %s; allowed there: fixed_window (not anchored), sliding_window, sliding_log, token_bucket, leaky_bucket, gcra", a, name, why)
	}
}
