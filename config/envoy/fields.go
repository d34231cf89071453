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
	list := pairs(p, n, field, nil, false)
	last := map[string]int{} // the pair of each key that counts: its last
	explicit := map[string]bool{}
	for i, kv := range list {
		if !kv.merged && explicit[kv.k.Value] {
			p.add(kv.k, join(field, kv.k.Value), "found the key a second time; allowed: once")
			continue
		}
		explicit[kv.k.Value] = explicit[kv.k.Value] || !kv.merged
		last[kv.k.Value] = i
	}
	seen := map[string]bool{}
	for i, kv := range list {
		k, v := kv.k, yamlnode.Deref(kv.v)
		if last[k.Value] != i {
			continue
		}
		f := join(field, k.Value)
		parse, ok := parsers[k.Value]
		switch {
		case !ok:
			p.add(k, f, "found an unknown key; allowed: %s", allowed(parsers))
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

// keyValue is a key of a mapping and its value; merged when it came from a
// mapping merged in (<<).
type keyValue struct {
	k, v   *yaml.Node
	merged bool
}

// pairs appends mapping n's pairs to out, in order, a merge key's (<<)
// mapping's in its place (of a list of mappings, the last first), so
// that the last pair of a key is the one that counts, as the reference's
// YAML reads merges: a key after a merge wins over the merged one, a
// merge over a key before it, the first of a list over the others. The
// aliases of a file have been checked to end (yamlnode.Aliases).
func pairs(p *problems, n *yaml.Node, field string, out []keyValue, merged bool) []keyValue {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlnode.Deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			out = append(out, keyValue{k, n.Content[i+1], merged})
			continue
		}
		switch {
		case v.Kind == yaml.MappingNode:
			out = pairs(p, v, field, out, true)
		case v.Kind == yaml.SequenceNode && isMappings(v.Content):
			for j := len(v.Content) - 1; j >= 0; j-- {
				out = pairs(p, yamlnode.Deref(v.Content[j]), field, out, true)
			}
		default:
			p.add(v, join(field, k.Value), "found %s; allowed: a mapping or a list of mappings to merge", yamlnode.Describe(v))
		}
	}
	return out
}

// isMappings reports whether every node of ns is a mapping (or an alias
// of one).
func isMappings(ns []*yaml.Node) bool {
	for _, n := range ns {
		if yamlnode.Deref(n).Kind != yaml.MappingNode {
			return false
		}
	}
	return true
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
