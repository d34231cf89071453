// Package yamlnode holds what the two YAML rules formats (package config's
// and package config/envoy's, the reference server's) say of a node the
// same way: how a problem quotes it, and the node an alias stands for.
package yamlnode

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Describe describes a node as a problem quotes it: a scalar's text (cut
// short when long), or the kind of a collection.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			return "an empty mapping"
		}
		return "a mapping"
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return "an empty list"
		}
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		s := n.Value
		if len(s) > 60 {
			s = s[:57] + "..."
		}
		return strconv.Quote(s)
	}
	return "a YAML node of kind " + strconv.Itoa(int(n.Kind))
}

// Deref follows an alias (an anchor's use) to its node.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}
