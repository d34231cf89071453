package config

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// keySpec is an identity as a file names it: "ip", "route", or one of
// header, constant, form, func (a key function the program registers) and
// join (several of these).
type keySpec struct {
	kind  string
	arg   string
	parts []*keySpec
	node  *yaml.Node
	field string
}

const keyForm = `"ip", "route", or a mapping of one of header, constant, form, func, join (e.g. {header: X-API-Key})`

// key reads an identity.
func (p *parser) key(n *yaml.Node, field string) *keySpec {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "ip" || n.Value == "route" {
			return &keySpec{kind: n.Value, node: n, field: field}
		}
		p.bad(n, field, keyForm)
		return nil
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		p.bad(n, field, keyForm)
		return nil
	}
	m := p.fields(n, field, "header", "constant", "form", "func", "join")
	for kind, v := range m {
		field := join(field, kind)
		switch kind {
		case "join":
			k := &keySpec{kind: kind, node: n, field: field}
			p.list(v, field, "identities", func(e *yaml.Node, f string) {
				if part := p.key(e, f); part != nil {
					k.parts = append(k.parts, part)
				}
			})
			if len(v.Content) < 2 {
				p.bad(v, field, "a list of two or more identities")
			}
			return k
		case "header":
			if s, ok := p.str(v, field, "a header name (e.g. X-API-Key)"); ok && validHeader(s) {
				return &keySpec{kind: kind, arg: s, node: v, field: field}
			}
			p.bad(v, field, "a header name: letters, digits and !#$%&'*+-.^_`|~")
		default:
			if s, ok := p.str(v, field, "a name"); ok {
				return &keySpec{kind: kind, arg: s, node: v, field: field}
			}
		}
	}
	return nil
}

// validHeader reports whether s is a header name (an RFC 9110 token).
func validHeader(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// String is the identity as Check prints it.
func (k *keySpec) String() string {
	switch k.kind {
	case "ip", "route":
		return k.kind
	case "header":
		return "header " + k.arg + " (hashed)"
	case "constant":
		return "constant " + strconv.Quote(k.arg)
	case "join":
		parts := make([]string, len(k.parts))
		for i, part := range k.parts {
			parts[i] = part.String()
		}
		return "join(" + strings.Join(parts, ", ") + ")"
	}
	return k.kind + " " + k.arg
}

// keyFunc builds the key function, reporting a func the program has not
// registered.
func (p *parser) keyFunc(k *keySpec, ip keyfunc.KeyFunc, funcs map[string]keyfunc.KeyFunc) keyfunc.KeyFunc {
	switch k.kind {
	case "ip":
		return ip
	case "route":
		return keyfunc.Route()
	case "header":
		return keyfunc.Header(k.arg)
	case "constant":
		return keyfunc.Constant(k.arg)
	case "form":
		return keyfunc.FormValue(k.arg)
	case "join":
		fns := make([]keyfunc.KeyFunc, len(k.parts))
		for i, part := range k.parts {
			fns[i] = p.keyFunc(part, ip, funcs)
		}
		return keyfunc.Join(fns...)
	}
	return p.registered(k, funcs)
}

// registered is the key function the program registered under k's name.
func (p *parser) registered(k *keySpec, funcs map[string]keyfunc.KeyFunc) keyfunc.KeyFunc {
	fn, ok := funcs[k.arg]
	if !ok {
		names := slices.Sorted(maps.Keys(funcs))
		for i, name := range names {
			names[i] = strconv.Quote(name)
		}
		allowed := "a name the program registers with config.WithKeyFunc (none is)"
		if len(names) > 0 {
			allowed = "one of the names the program registers: " + strings.Join(names, ", ")
		}
		p.bad(k.node, k.field, allowed)
	}
	return fn
}

// plans are a rule's limits by a request attribute: a header's value, or
// what a registered function returns.
type plans struct {
	by     *keySpec // header (its raw value) or func
	values map[string]algorithms.Algorithm
}

// plans reads a rule's plans.
func (p *parser) plans(n *yaml.Node, field string) *plans {
	m := p.fields(n, field, "header", "func", "values")
	if m == nil {
		return nil
	}
	pl := &plans{values: map[string]algorithms.Algorithm{}}
	switch h, f := m["header"], m["func"]; {
	case h != nil && f != nil:
		p.fail(f, join(field, "func"), "found both header and func; allowed: one of them")
	case h != nil:
		if s, ok := p.str(h, join(field, "header"), "a header name (e.g. X-Plan)"); ok {
			pl.by = &keySpec{kind: "header", arg: s, node: h, field: join(field, "header")}
		}
	case f != nil:
		if s, ok := p.str(f, join(field, "func"), "a name the program registers"); ok {
			pl.by = &keySpec{kind: "func", arg: s, node: f, field: join(field, "func")}
		}
	default:
		p.fail(n, join(field, "header"), "found no attribute to choose by; required: header or func")
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
		name, val := v.Content[i].Value, deref(v.Content[i+1])
		f := join(join(field, "values"), name)
		if _, dup := pl.values[name]; dup {
			p.fail(v.Content[i], f, "found the value a second time; allowed once")
			continue
		}
		if am := p.fields(val, f, kindFields...); am != nil {
			pl.values[name] = p.algorithm(val, am, f)
		}
	}
	return pl
}

// plan builds the Rule.Plan function.
func (p *parser) plan(pl *plans, funcs map[string]keyfunc.KeyFunc) func(*http.Request) algorithms.Algorithm {
	values := pl.values
	if pl.by.kind == "header" {
		name := http.CanonicalHeaderKey(pl.by.arg)
		return func(r *http.Request) algorithms.Algorithm { return values[r.Header.Get(name)] }
	}
	fn := p.registered(pl.by, funcs)
	return func(r *http.Request) algorithms.Algorithm {
		v, err := fn(r)
		if err != nil {
			return nil
		}
		return values[v]
	}
}
