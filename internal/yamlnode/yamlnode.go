// Package yamlnode holds what the two YAML rules formats (package config's
// and package config/envoy's, the reference server's) do the same way: a
// file's bounded read (read.go), how a problem quotes a node, and the
// node an alias stands for.
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

// MaxAliased is the most nodes the aliases of a document may stand for,
// in all: a few lines of aliases of aliases stand for billions of nodes,
// which a walk would take hours and gigabytes to follow.
const MaxAliased = 100_000

// Aliases checks that the aliases of n can be followed: none stands for a
// node that contains it (a walk would never end), and together they stand
// for at most MaxAliased nodes. It returns the alias at fault and what is
// wrong with it, as a problem says it; nil when nothing is.
func Aliases(n *yaml.Node) (*yaml.Node, string) {
	w := aliasWalk{open: map[*yaml.Node]bool{}}
	return w.walk(n, nil)
}

// aliasWalk is a walk of a document that follows its aliases.
type aliasWalk struct {
	open    map[*yaml.Node]bool // the nodes being walked, from the document down
	aliased int                 // the nodes met through an alias
}

// walk walks n, met through alias via (nil when through none).
func (w *aliasWalk) walk(n, via *yaml.Node) (*yaml.Node, string) {
	if n.Kind == yaml.AliasNode {
		if w.open[n.Alias] {
			return n, "found the alias *" + n.Value + " inside the node it stands for; allowed: an alias of a node that does not contain it"
		}
		if via == nil {
			via = n
		}
		return w.walk(n.Alias, via)
	}
	if via != nil {
		if w.aliased++; w.aliased > MaxAliased {
			return via, "found aliases that stand for more than " + strconv.Itoa(MaxAliased) + " nodes; allowed: at most " + strconv.Itoa(MaxAliased)
		}
	}
	w.open[n] = true
	defer delete(w.open, n)
	for _, c := range n.Content {
		if at, msg := w.walk(c, via); at != nil {
			return at, msg
		}
	}
	return nil, ""
}
