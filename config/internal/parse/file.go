package parse

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/netx"
	"github.com/seed-bff0c9e1/ratelimit/internal/token"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// File is a rules file as read: every value checked, nothing built yet.
type File struct {
	Prefix   string           // the limiter's key prefix; "" for its default
	ClientIP keyfunc.IPConfig // how client addresses are found
	Failure  string           // "open" or "closed"
	Exempt   []string         // the networks no stack limits (a stack may have its own)
	Rules    []*Rule
	Stacks   []*Stack
}

// Rule is one rule of a file: its name, its identity (Key, and AltKey
// when Key has none), its algorithm, and what package limiter's Rule
// takes besides (see Limit).
type Rule struct {
	node      *yaml.Node
	field     string
	Name      string
	Key       *Key
	AltKey    *Key
	Optional  bool // a request without Key's (or AltKey's) identity is not limited by the rule
	Blockable bool
	// Shadow: the rule is decided and counted but never refuses.
	Shadow    bool
	Algorithm algorithms.Algorithm
	Plans     *Plans
	Penalty   time.Duration
	Lease     time.Duration
	// penaltyNode, leaseNode and algorithmNode are where a limit on them
	// is reported.
	penaltyNode, leaseNode, algorithmNode *yaml.Node
}

// Stack is a set of rules decided together for a request, wired by name
// (config's Limits.Middleware) and by the ServeMux patterns it matches
// (Limits.Handler), or for a gRPC call (Methods) or an Envoy descriptor
// (Domain).
type Stack struct {
	node  *yaml.Node
	field string
	Name  string
	Rules []string
	Match []string
	// Methods are the gRPC calls the stack decides (full methods, or
	// "/pkg.Service/*"): a stack with methods is a gRPC stack.
	Methods []string
	// Domain is the Envoy domain the stack decides (see domain.go): a
	// stack with a domain is an Envoy stack.
	Domain  string
	Failure string   // "" for the file's
	Exempt  []string // nil for the file's
	// ruleAt, matchAt and methodAt are where each of Rules, Match and
	// Methods is, for problems of an entry.
	ruleAt, matchAt, methodAt []entry
	methodsNode, domainNode   *yaml.Node
}

// Top-level, rule and stack fields, in the order the documentation lists
// them.
var (
	fileFields  = []string{"prefix", "client_ip", "fail", "exempt", "rules", "stacks"}
	ruleFields  = append([]string{"name", "key", "alt_key", "optional", "plans", "lease", "penalty", "blockable", "shadow"}, kindFields...)
	stackFields = []string{"name", "rules", "match", "methods", "domain", "fail", "exempt"}
)

// parse reads data, the contents of the file named name, as YAML (JSON
// included), returning every problem found, and what it could read
// despite them (nil when not even the document could be read).
func parse(name string, data []byte) (*File, error) {
	p := &parser{file: name}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := jsonSyntax(name, data); err != nil {
		return nil, err
	}
	if err := dec.Decode(&doc); err != nil {
		p.errs = append(p.errs, syntaxError(name, data, dec, err))
		return nil, p.err()
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		p.fail(&extra, "(document)", "found a second YAML document; allowed: one")
	}
	if len(doc.Content) == 0 {
		p.fail(&doc, "(document)", "found nothing; required: a mapping with rules and stacks")
		return nil, p.err()
	}
	if at, msg := yamlnode.Aliases(&doc); at != nil {
		p.fail(at, "(document)", "%s", msg)
		return nil, p.err()
	}
	return p.top(doc.Content[0]), p.err()
}

func (p *parser) top(n *yaml.Node) *File {
	n = yamlnode.Deref(n)
	m := p.fields(n, "", fileFields...)
	if m == nil {
		return nil
	}
	f := &File{Failure: "open"}
	p.require(n, m, "", "rules", "stacks")
	if v, ok := m["prefix"]; ok {
		f.Prefix, _ = p.str(v, "prefix", "a key prefix (e.g. api)")
	}
	if v, ok := m["client_ip"]; ok {
		f.ClientIP = p.clientIP(v, "client_ip")
	}
	if v, ok := m["fail"]; ok {
		f.Failure = p.failure(v, "fail")
	}
	if v, ok := m["exempt"]; ok {
		f.Exempt = p.networks(v, "exempt", false)
	}
	if v, ok := m["rules"]; ok {
		p.list(v, "rules", "rules", func(e *yaml.Node, field string) {
			if r := p.rule(e, field); r != nil {
				f.Rules = append(f.Rules, r)
			}
		})
	}
	if v, ok := m["stacks"]; ok {
		p.list(v, "stacks", "stacks", func(e *yaml.Node, field string) {
			if s := p.stack(e, field); s != nil {
				f.Stacks = append(f.Stacks, s)
			}
		})
		if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
			p.fail(v, "stacks", "found an empty list; required: one or more stacks (a file without one limits nothing)")
		}
	}
	p.crossCheck(f)
	return f
}

// clientIP reads how client addresses are found: the proxies trusted to
// forward them, the one forwarding field they set, and the prefix lengths
// that group them.
func (p *parser) clientIP(n *yaml.Node, field string) keyfunc.IPConfig {
	var cfg keyfunc.IPConfig
	m := p.fields(n, field, "trusted_proxies", "header", "ipv4_prefix", "ipv6_prefix")
	if v, ok := m["trusted_proxies"]; ok {
		cfg.TrustedProxies = p.networks(v, join(field, "trusted_proxies"), true)
	}
	if v, ok := m["header"]; ok {
		cfg.Header = p.forwardingHeader(v, join(field, "header"))
	}
	if v, ok := m["ipv4_prefix"]; ok {
		cfg.IPv4PrefixLen, _ = p.integer(v, join(field, "ipv4_prefix"), 1, 32)
	}
	if v, ok := m["ipv6_prefix"]; ok {
		cfg.IPv6PrefixLen, _ = p.integer(v, join(field, "ipv6_prefix"), 1, 128)
	}
	return cfg
}

// forwardingHeader reads the name of the one forwarding field the trusted
// proxies set, as keyfunc.ClientIP accepts it.
func (p *parser) forwardingHeader(n *yaml.Node, field string) string {
	const allowed = "X-Real-IP, X-Forwarded-For or Forwarded, in any case: the one field the trusted proxies set"
	s, ok := p.str(n, field, allowed)
	if !ok {
		return ""
	}
	if _, err := keyfunc.ClientIP(keyfunc.IPConfig{Header: s}); err != nil {
		p.bad(n, field, allowed)
		return ""
	}
	return s
}

// networks reads a list of CIDRs or addresses; of proxies, also
// netx.UnixPeers ("unix", the peers on a Unix socket).
func (p *parser) networks(n *yaml.Node, field string, proxies bool) []string {
	allowed := "a CIDR or an address (e.g. 10.0.0.0/8, 192.0.2.7, 2001:db8::/32)"
	if proxies {
		allowed += ", or unix (the peers on a Unix socket)"
	}
	nets, at := p.strs(n, field, allowed)
	for i, s := range nets {
		if _, unix, err := netx.ParseProxy(s); err != nil || unix && !proxies {
			p.bad(at[i].node, at[i].field, allowed)
		}
	}
	if nets == nil {
		nets = []string{}
	}
	return nets
}

// failure reads the failure policy.
func (p *parser) failure(n *yaml.Node, field string) string {
	const allowed = `"open" (serve requests Redis failed to decide) or "closed" (answer them 503)`
	s, ok := p.str(n, field, allowed)
	if ok && s != "open" && s != "closed" {
		p.bad(n, field, allowed)
	}
	return s
}

func (p *parser) rule(n *yaml.Node, field string) *Rule {
	m := p.fields(n, field, ruleFields...)
	if m == nil {
		return nil
	}
	r := &Rule{node: n, field: field}
	p.require(n, m, field, "name", "key")
	if v, ok := m["name"]; ok {
		r.Name, _ = p.str(v, join(field, "name"), "1 to 64 bytes of [A-Za-z0-9._-]")
		r.node = v
	}
	if v, ok := m["key"]; ok {
		r.Key = p.key(v, join(field, "key"))
	}
	if v, ok := m["alt_key"]; ok {
		r.AltKey = p.key(v, join(field, "alt_key"))
	}
	for name, b := range map[string]*bool{"optional": &r.Optional, "blockable": &r.Blockable, "shadow": &r.Shadow} {
		if v, ok := m[name]; ok {
			*b = p.boolean(v, join(field, name))
		}
	}
	r.Algorithm = p.algorithm(n, m, field)
	for _, k := range kindFields {
		r.algorithmNode = orNode(r.algorithmNode, m[k])
	}
	if v, ok := m["plans"]; ok {
		r.Plans = p.plans(v, join(field, "plans"))
	}
	if v, ok := m["penalty"]; ok {
		r.Penalty, r.penaltyNode = p.duration(v, join(field, "penalty")), v
	}
	if v, ok := m["lease"]; ok {
		r.Lease, r.leaseNode = p.duration(v, join(field, "lease")), v
	}
	return r
}

func (p *parser) stack(n *yaml.Node, field string) *Stack {
	m := p.fields(n, field, stackFields...)
	if m == nil {
		return nil
	}
	s := &Stack{node: n, field: field}
	p.require(n, m, field, "name", "rules")
	if v, ok := m["name"]; ok {
		s.Name, _ = p.str(v, join(field, "name"), "a name (e.g. api)")
		s.node = v
	}
	if v, ok := m["rules"]; ok {
		s.Rules, s.ruleAt = p.strs(v, join(field, "rules"), "rule names")
		if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
			p.bad(v, join(field, "rules"), "a list of one or more rule names")
		}
	}
	if v, ok := m["match"]; ok {
		s.Match, s.matchAt = p.strs(v, join(field, "match"), `http.ServeMux patterns (e.g. "POST /login", "/api/")`)
	}
	if v, ok := m["methods"]; ok {
		s.Methods, s.methodAt = p.strs(v, join(field, "methods"), `gRPC full methods or services (e.g. "/pkg.Service/Method", "/pkg.Service/*")`)
		s.methodsNode = v
		if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
			p.bad(v, join(field, "methods"), "a list of one or more gRPC methods or services")
		}
		for i, pattern := range s.Methods {
			if !validMethod(pattern) {
				p.bad(s.methodAt[i].node, s.methodAt[i].field, `a gRPC full method ("/pkg.Service/Method") or service ("/pkg.Service/*")`)
			}
		}
		if m["match"] != nil {
			p.fail(v, join(field, "methods"), "found both match and methods; allowed: one of them (a stack decides HTTP requests or gRPC calls)")
		}
	}
	if v, ok := m["domain"]; ok {
		p.domain(s, v, m)
	}
	if v, ok := m["fail"]; ok {
		s.Failure = p.failure(v, join(field, "fail"))
	}
	if v, ok := m["exempt"]; ok {
		s.Exempt = p.networks(v, join(field, "exempt"), false)
		if m["methods"] != nil {
			p.fail(v, join(field, "exempt"), "found exempt networks on a gRPC stack; allowed: exempt on HTTP stacks (gRPC exempts methods: grpclimit.WithExemptMethods)")
		}
	}
	return s
}

// validMethod reports whether pattern is a gRPC full method name
// ("/pkg.Service/Method") or a service's every method ("/pkg.Service/*").
func validMethod(pattern string) bool {
	svc, method, ok := strings.Cut(strings.TrimPrefix(pattern, "/"), "/")
	return strings.HasPrefix(pattern, "/") && ok && svc != "" && method != "" && !strings.ContainsAny(svc, "*/") &&
		!strings.Contains(method, "/") && (method == "*" || !strings.Contains(method, "*"))
}

// Door is the door stack s decides on.
func (s *Stack) Door() Door {
	if s.domainNode != nil {
		return EnvoyDoor
	}
	if s.methodsNode != nil {
		return GRPCDoor
	}
	return HTTPDoor
}

// Problem is err, what the limiter or a door refused of stack s as it
// was built, as a problem of the file named file at the stack.
func (s *Stack) Problem(file string, err error) *Problem {
	return &Problem{File: file, Line: s.node.Line, Column: s.node.Column, Field: s.field, Message: trimConfig(err)}
}

// crossCheck reports what no single field shows: names used twice, a stack
// naming a rule the file does not have, patterns that conflict.
func (p *parser) crossCheck(f *File) {
	rules := map[string]*Rule{}
	for _, r := range f.Rules {
		if r.Name == "" {
			continue
		}
		if first, dup := rules[r.Name]; dup {
			p.fail(r.node, join(r.field, "name"), "found %q again; allowed: a name no other rule has (first at line %d)", r.Name, first.node.Line)
			continue
		}
		rules[r.Name] = r
	}
	known := listed(slices.Sorted(maps.Keys(rules)))
	stacks := map[string]*Stack{}
	domains := map[string]*Stack{}
	methods := map[string]*Stack{} // each gRPC method or service pattern, by the stack that names it first
	mux := http.NewServeMux()
	for _, s := range f.Stacks {
		if first, dup := stacks[s.Name]; dup && s.Name != "" {
			p.fail(s.node, join(s.field, "name"), "found %q again; allowed: a name no other stack has (first at line %d)", s.Name, first.node.Line)
		}
		stacks[s.Name] = s
		var once []string // s's rules, each once
		named := make(map[string]bool, len(s.Rules))
		for i, name := range s.Rules {
			if _, ok := rules[name]; !ok {
				p.fail(s.ruleAt[i].node, s.ruleAt[i].field, "found %q; allowed: a rule of this file (%s)", name, known)
			}
			if named[name] {
				p.fail(s.ruleAt[i].node, s.ruleAt[i].field, "found %q a second time; allowed once per stack", name)
				continue
			}
			named[name] = true
			once = append(once, name)
		}
		p.doorsOf(s, once, rules)
		p.envoyStack(s, once, rules, domains)
		for i, pattern := range s.Match {
			if msg := register(mux, pattern); msg != "" {
				p.fail(s.matchAt[i].node, s.matchAt[i].field, "found %q: %s; allowed: an http.ServeMux pattern that no other stack's pattern conflicts with", pattern, msg)
			}
		}
		for i, pattern := range s.Methods {
			// A call is decided by one stack: a pattern two stacks name
			// would be decided by whichever was built last.
			if first, dup := methods[pattern]; dup && first != s {
				p.fail(s.methodAt[i].node, s.methodAt[i].field, "found %q: stack %q names it too (line %d); allowed: a method or service no other stack names", pattern, first.Name, first.methodsNode.Line)
			} else if !dup {
				methods[pattern] = s
			}
		}
	}
}

// maxListed is how many names a problem lists (of the file's rules, of a
// key's descriptor keys, of a join's parts): a file may have thousands,
// and each of its problems would list them all.
const maxListed = 10

// listed is names as a problem lists them: the first maxListed, then how
// many more there are.
func listed(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

// doorsOf reports each identity of stack s's rules (names, each once:
// their keys, alternative keys and plan attributes) that cannot be read
// on the stack's door: a header on a gRPC stack, metadata on an HTTP one.
func (p *parser) doorsOf(s *Stack, names []string, rules map[string]*Rule) {
	d := s.Door()
	for _, name := range names {
		r := rules[name]
		if r == nil {
			continue
		}
		specs := []*Key{r.Key, r.AltKey}
		if r.Plans != nil {
			specs = append(specs, r.Plans.By)
		}
		for _, k := range specs {
			if k != nil && k.Doors()&d == 0 {
				p.fail(k.node, k.field, "found %v, read on %v only, in rule %q of %v stack %q; allowed there: %s",
					k, k.Doors(), name, d, s.Name, kindsOn(d))
			} else if k != nil && d == GRPCDoor {
				p.uncarried(k, name, s.Name)
			}
		}
	}
}

// uncarried reports the headers and metadata of k (itself, or a join's
// parts) that rule's gRPC stack named stack reads as metadata keys no
// call can carry: a header name allows characters a gRPC key does not,
// and a plan's attribute is not checked when it is read.
func (p *parser) uncarried(k *Key, rule, stack string) {
	switch k.Kind {
	case "header", "metadata":
		if !token.MetadataKey(k.Arg) {
			p.fail(k.node, k.field, "found %v, in rule %q of gRPC stack %q, a key no call can carry; allowed there: %s", k, rule, stack, metadataChars)
		}
	case "join":
		for _, part := range k.Parts {
			p.uncarried(part, rule, stack)
		}
	}
}

// register adds pattern to mux, returning ServeMux's complaint about it
// (an invalid pattern, or one that conflicts with another), if any.
func register(mux *http.ServeMux, pattern string) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = conflict(strings.TrimPrefix(fmt.Sprint(v), "http: "))
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return ""
}

// conflict shortens ServeMux's message about two conflicting patterns to
// the other pattern and the reason, leaving out where in this package
// each was registered.
func conflict(msg string) string {
	const with = `conflicts with pattern "`
	_, rest, ok := strings.Cut(msg, with)
	if !ok {
		return msg
	}
	other, _, _ := strings.Cut(rest, `"`)
	_, why, _ := strings.Cut(rest, ":\n")
	return fmt.Sprintf("it conflicts with the pattern %q of another stack (%s)", other, strings.TrimSpace(why))
}
