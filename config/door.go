package config

import (
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// keys builds, for a door whose requests are R, the functions of the
// identities and plan attributes a file names: the kinds the door can
// read (see keySpec.doors), which the parser has checked.
type keys[R any] interface {
	// key is the key function of k, a kind other than join.
	key(k *keySpec) func(R) (string, error)
	// attr is the raw value of a plan's attribute k ("" when none).
	attr(k *keySpec) func(R) string
}

// rulesOf are the rules of f named names, in their order, as rules of the
// door k builds for.
func rulesOf[R any](f *file, names []string, k keys[R]) []guard.Rule[R] {
	byName := make(map[string]*rule, len(f.rules))
	for _, r := range f.rules {
		byName[r.name] = r
	}
	out := make([]guard.Rule[R], len(names))
	for i, name := range names {
		r := byName[name]
		out[i] = guard.Rule[R]{Rule: r.limit(), Identity: keyOf(r.key, k), AltIdentity: keyOf(r.altKey, k), Optional: r.optional}
		if r.plans != nil && r.plans.by != nil {
			attr, values := k.attr(r.plans.by), r.plans.values
			out[i].Plan = func(req R) algorithms.Algorithm { return values[attr(req)] }
		}
	}
	return out
}

// limit is r's limiter rule.
func (r *rule) limit() limiter.Rule {
	return limiter.Rule{Name: r.name, Algorithm: r.algorithm, Blockable: r.blockable, Penalty: r.penalty, Lease: r.lease, Shadow: r.shadow}
}

// keyOf is the key function of spec on k's door; nil for no spec.
func keyOf[R any](spec *keySpec, k keys[R]) func(R) (string, error) {
	switch {
	case spec == nil:
		return nil
	case spec.kind == "join":
		parts := make([]func(R) (string, error), len(spec.parts))
		for i, part := range spec.parts {
			parts[i] = keyOf(part, k)
		}
		return keyfunc.JoinOf(parts...)
	}
	return k.key(spec)
}

// httpKeys builds identities of HTTP requests, with package keyfunc.
type httpKeys struct {
	ip    keyfunc.KeyFunc // as the file's client_ip resolves it
	funcs map[string]keyfunc.KeyFunc
}

func (h httpKeys) key(k *keySpec) func(*http.Request) (string, error) {
	switch k.kind {
	case "ip":
		return h.ip
	case "route":
		return keyfunc.Route()
	case "header":
		return keyfunc.Header(k.arg)
	case "constant":
		return keyfunc.Constant(k.arg)
	case "form":
		return keyfunc.FormValue(k.arg)
	}
	return h.funcs[k.arg]
}

func (h httpKeys) attr(k *keySpec) func(*http.Request) string {
	if k.kind == "header" {
		name := http.CanonicalHeaderKey(k.arg)
		return func(r *http.Request) string { return r.Header.Get(name) }
	}
	fn := h.funcs[k.arg]
	return func(r *http.Request) string {
		v, err := fn(r)
		if err != nil {
			return ""
		}
		return v
	}
}
