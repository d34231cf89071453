package parse

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/token"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// Key is an identity as a file names it: "ip", "route", "method", or
// one of header, metadata, descriptor (an Envoy descriptor entry's
// value), constant, form, func (a key function the program registers) and
// join (several of these).
type Key struct {
	Kind  string // "ip", "route", "method", or the field: "header", "join"...
	Arg   string // the field's value: a header's name, a constant; "" for a join
	Parts []*Key // a join's
	node  *yaml.Node
	field string
}

const keyForm = `"ip", "route", "method", or a mapping of one of header, metadata, descriptor, constant, form, func, join (e.g. {header: X-API-Key})`

// partForm is what a join's part may be: any identity but a join. Each
// level of nesting would escape the level below again, doubling its
// escapes: a few levels make every request's identity megabytes long.
const partForm = `"ip", "route", "method", or a mapping of one of header, metadata, descriptor, constant, form, func (a join's parts are not joins)`

// key reads an identity.
func (p *parser) key(n *yaml.Node, field string) *Key {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "ip" || n.Value == "route" || n.Value == "method" {
			return &Key{Kind: n.Value, node: n, field: field}
		}
		p.bad(n, field, keyForm)
		return nil
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		p.bad(n, field, keyForm)
		return nil
	}
	m := p.fields(n, field, "header", "metadata", "descriptor", "constant", "form", "func", "join")
	for kind, v := range m {
		field := join(field, kind)
		switch kind {
		case "join":
			k := &Key{Kind: kind, node: n, field: field}
			p.list(v, field, "identities", func(e *yaml.Node, f string) {
				if e.Kind == yaml.MappingNode && len(e.Content) == 2 && e.Content[0].Value == "join" {
					p.bad(e, f, partForm)
					return
				}
				if part := p.key(e, f); part != nil {
					k.Parts = append(k.Parts, part)
				}
			})
			if v.Kind == yaml.SequenceNode && len(v.Content) < 2 {
				p.bad(v, field, "a list of two or more identities")
			}
			return k
		case "header":
			if s, ok := p.str(v, field, "a header name (e.g. X-API-Key)"); ok && token.Valid(s) {
				return &Key{Kind: kind, Arg: s, node: v, field: field}
			}
			p.bad(v, field, "a header name: letters, digits and !#$%&'*+-.^_`|~")
		case "metadata":
			if s, ok := p.str(v, field, "a metadata key (e.g. x-api-key)"); ok && token.MetadataKey(s) {
				return &Key{Kind: kind, Arg: s, node: v, field: field}
			}
			p.bad(v, field, "a metadata key: "+metadataChars)
		default:
			if s, ok := p.str(v, field, "a name"); ok {
				return &Key{Kind: kind, Arg: s, node: v, field: field}
			}
		}
	}
	return nil
}

// metadataChars are the characters of a gRPC metadata key, for problems.
const metadataChars = `letters, digits, "-", "_" and "."`

// String is the identity as config.Check prints it (a join's first
// parts, when it has many: see listed).
func (k *Key) String() string {
	switch k.Kind {
	case "ip", "route", "method":
		return k.Kind
	case "header", "metadata", "descriptor":
		return k.Kind + " " + k.Arg + " (hashed)"
	case "constant":
		return "constant " + strconv.Quote(k.Arg)
	case "join":
		parts := make([]string, len(k.Parts))
		for i, part := range k.Parts {
			parts[i] = part.String()
		}
		return "join(" + listed(parts) + ")"
	}
	return k.Kind + " " + k.Arg
}

// Door is the doors an identity can be read on, as a set.
type Door uint8

// The doors, each a set of one.
const (
	HTTPDoor  Door = 1 << iota // HTTP requests: the stacks without methods or domain
	GRPCDoor                   // gRPC calls: the stacks with methods
	EnvoyDoor                  // Envoy descriptors: the stacks with a domain
)

// String names d's doors.
func (d Door) String() string {
	switch d {
	case HTTPDoor:
		return "HTTP"
	case GRPCDoor:
		return "gRPC"
	case EnvoyDoor:
		return "Envoy"
	case HTTPDoor | GRPCDoor:
		return "HTTP and gRPC"
	case HTTPDoor | GRPCDoor | EnvoyDoor:
		return "HTTP, gRPC and Envoy"
	}
	return "no door"
}

// Doors is the doors k can be read on: ip on all three (an Envoy
// descriptor's is its remote_address entry), constant and header on HTTP's
// and gRPC's (a gRPC call's header is its metadata of that name), route,
// form and func on HTTP's, metadata (binary values too) and method on
// gRPC's, descriptor on Envoy's, a join where all its parts can.
func (k *Key) Doors() Door {
	switch k.Kind {
	case "ip":
		return HTTPDoor | GRPCDoor | EnvoyDoor
	case "constant", "header":
		return HTTPDoor | GRPCDoor
	case "metadata", "method":
		return GRPCDoor
	case "descriptor":
		return EnvoyDoor
	case "join":
		d := HTTPDoor | GRPCDoor | EnvoyDoor
		for _, part := range k.Parts {
			d &= part.Doors()
		}
		return d
	}
	return HTTPDoor
}

// kindsOn lists the identities of door d, for problems.
func kindsOn(d Door) string {
	switch d {
	case GRPCDoor:
		return "ip, constant, header, metadata, method, or a join of them"
	case EnvoyDoor:
		return "descriptor, ip (the remote_address entry), or a join of them"
	}
	return "ip, constant, header, route, form, func, or a join of them"
}

// unregistered reports a func identity or plan attribute of k (and its
// parts) that the program has not registered: funcs are the names it
// registers.
func (p *parser) unregistered(k *Key, funcs []string) {
	if k == nil {
		return
	}
	for _, part := range k.Parts {
		p.unregistered(part, funcs)
	}
	if k.Kind != "func" || slices.Contains(funcs, k.Arg) {
		return
	}
	names := slices.Compact(slices.Sorted(slices.Values(funcs)))
	for i, name := range names {
		names[i] = strconv.Quote(name)
	}
	allowed := "a name the program registers with config.WithKeyFunc (none is)"
	if len(names) > 0 {
		allowed = "one of the names the program registers: " + strings.Join(names, ", ")
	}
	p.bad(k.node, k.field, allowed)
}

// Plans are a rule's limits by a request attribute: a header's, a
// metadata's or a descriptor entry's value, or what a registered function
// returns.
type Plans struct {
	By     *Key                            // header, metadata, descriptor (its raw value) or func
	Values map[string]algorithms.Algorithm // by the attribute's value
	nodes  map[string]*yaml.Node           // each value's algorithm, for problems
}

// plans reads a rule's plans.
func (p *parser) plans(n *yaml.Node, field string) *Plans {
	m := p.fields(n, field, "header", "metadata", "descriptor", "func", "values")
	if m == nil {
		return nil
	}
	pl := &Plans{Values: map[string]algorithms.Algorithm{}, nodes: map[string]*yaml.Node{}}
	var by []string
	for _, kind := range []string{"header", "metadata", "descriptor", "func"} {
		if m[kind] != nil {
			by = append(by, kind)
		}
	}
	switch {
	case len(by) > 1:
		p.fail(m[by[1]], join(field, by[1]), "found both %s and %s; allowed: one of them", by[0], by[1])
	case len(by) == 0:
		p.fail(n, join(field, "header"), "found no attribute to choose by; required: header, metadata, descriptor or func")
	default:
		kind, v := by[0], m[by[0]]
		allowed := map[string]string{"header": "a header name (e.g. X-Plan)", "metadata": "a metadata name (e.g. x-plan)",
			"descriptor": "a descriptor key (e.g. plan)", "func": "a name the program registers"}[kind]
		if s, ok := p.str(v, join(field, kind), allowed); ok {
			pl.By = &Key{Kind: kind, Arg: s, node: v, field: join(field, kind)}
		}
	}
	v, ok := m["values"]
	if !ok {
		p.require(n, m, field, "values")
		return pl
	}
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		p.bad(v, join(field, "values"), "a mapping of attribute values to algorithms (e.g. {pro: {gcra: 1000/1m}})")
		return pl
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		name, val := v.Content[i].Value, yamlnode.Deref(v.Content[i+1])
		f := join(join(field, "values"), name)
		if _, dup := pl.Values[name]; dup {
			p.fail(v.Content[i], f, "found the value a second time; allowed once")
			continue
		}
		if name == "" {
			p.fail(v.Content[i], join(field, "values"), "found an empty value; allowed: a value the attribute takes (a request without one is decided by the rule's algorithm)")
			continue
		}
		if am := p.fields(val, f, kindFields...); am != nil {
			pl.Values[name], pl.nodes[name] = p.algorithm(val, am, f), val
		}
	}
	return pl
}
