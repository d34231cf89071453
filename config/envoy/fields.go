package envoy

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fields walks mapping n: each key's node goes to its parser, with its
// field path; an unknown key, a repeated key, a missing required key and
// a node that is not a mapping are problems.
func fields(p *problems, n *yaml.Node, field string, parsers map[string]func(*yaml.Node, string), required ...string) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.add(n, orFile(field), "found %s; allowed: a mapping", quoted(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		f := join(field, k.Value)
		parse, ok := parsers[k.Value]
		switch {
		case !ok:
			p.add(k, f, "found an unknown key; allowed: %s", allowed(parsers))
		case seen[k.Value]:
			p.add(k, f, "found the key a second time; allowed: once")
		default:
			seen[k.Value] = true
			parse(v, f)
		}
	}
	for _, r := range required {
		if !seen[r] {
			p.add(n, join(field, r), "found nothing; required: %s", r)
		}
	}
}

// allowed lists a mapping's keys, sorted.
func allowed(parsers map[string]func(*yaml.Node, string)) string {
	keys := make([]string, 0, len(parsers))
	for k := range parsers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func orFile(field string) string {
	if field == "" {
		return "(file)"
	}
	return field
}

// deref follows an alias to its anchor's node.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// str is n's string, or "" with a problem when n is not a string.
func str(p *problems, n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!map" {
		p.add(n, field, "found %s; allowed: a string", quoted(n))
		return ""
	}
	return n.Value
}

// boolean is n's boolean, or false with a problem when n is not one.
func boolean(p *problems, n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.add(n, field, "found %s; allowed: true or false", quoted(n))
	}
	return b
}
