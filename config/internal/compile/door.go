package compile

import (
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// keys builds, for a door whose requests are R, the functions of the
// identities and plan attributes a file names: the kinds the door can
// read (see parse.Key.Doors), which the parser has checked.
type keys[R any] interface {
	// key is the key function of k, a kind other than join.
	key(k *parse.Key) func(R) (string, error)
	// attr is the raw value of a plan's attribute k ("" when none).
	attr(k *parse.Key) func(R) string
}

// rulesOf are the rules of f named names, in their order, as rules of the
// door k builds for.
func rulesOf[R any](f *parse.File, names []string, k keys[R]) []guard.Rule[R] {
	byName := make(map[string]*parse.Rule, len(f.Rules))
	for _, r := range f.Rules {
		byName[r.Name] = r
	}
	out := make([]guard.Rule[R], len(names))
	for i, name := range names {
		r := byName[name]
		out[i] = guard.Rule[R]{Rule: r.Limit(), Identity: keyOf(r.Key, k), AltIdentity: keyOf(r.AltKey, k), Optional: r.Optional}
		if r.Plans != nil && r.Plans.By != nil {
			attr, values := k.attr(r.Plans.By), r.Plans.Values
			out[i].Plan = func(req R) algorithms.Algorithm { return values[attr(req)] }
		}
	}
	return out
}

// keyOf is the key function of spec on k's door; nil for no spec.
func keyOf[R any](spec *parse.Key, k keys[R]) func(R) (string, error) {
	switch {
	case spec == nil:
		return nil
	case spec.Kind == "join":
		parts := make([]func(R) (string, error), len(spec.Parts))
		for i, part := range spec.Parts {
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

func (h httpKeys) key(k *parse.Key) func(*http.Request) (string, error) {
	switch k.Kind {
	case "ip":
		return h.ip
	case "route":
		return keyfunc.Route()
	case "header":
		return keyfunc.Header(k.Arg)
	case "constant":
		return keyfunc.Constant(k.Arg)
	case "form":
		return keyfunc.FormValue(k.Arg)
	}
	return h.funcs[k.Arg]
}

func (h httpKeys) attr(k *parse.Key) func(*http.Request) string {
	if k.Kind == "header" {
		name := http.CanonicalHeaderKey(k.Arg)
		return func(r *http.Request) string { return r.Header.Get(name) }
	}
	fn := h.funcs[k.Arg]
	return func(r *http.Request) string {
		v, err := fn(r)
		if err != nil {
			return ""
		}
		return v
	}
}
