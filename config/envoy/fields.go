package envoy

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// fields walks mapping n: each key's node goes to its parser, with its
// field path; an unknown key, a repeated key, a missing required key and
// a node that is not a mapping are problems.
func fields(p *problems, n *yaml.Node, field string, parsers map[string]func(*yaml.Node, string), required ...string) {
	n = yamlnode.Deref(n)
	if n.Kind != yaml.MappingNode {
		p.add(n, orFile(field), "found %s; allowed: a mapping", yamlnode.Describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlnode.Deref(n.Content[i+1])
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

// str is n's string, or "" with a problem when n is not a string.
func str(p *problems, n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!map" {
		p.add(n, field, "found %s; allowed: a string", yamlnode.Describe(n))
		return ""
	}
	return n.Value
}

// optStr is n's string, "" for nothing (a key given no value, or null), as
// the reference reads an empty string field; a problem when n is neither.
func optStr(p *problems, n *yaml.Node, field string) string {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return ""
	}
	return str(p, n, field)
}

// boolean is n's boolean, or false with a problem when n is not one.
func boolean(p *problems, n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.add(n, field, "found %s; allowed: true or false", yamlnode.Describe(n))
	}
	return b
}
