package rls

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/config"
)

// problems collects the problems of one file, as config.Problem values,
// so that a reference-format file reports its errors as the library's
// rules file does: file:line:column, field, what was found.
type problems struct {
	file string
	list []error
}

// add records a problem of field at node n.
func (p *problems) add(n *yaml.Node, field, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	p.list = append(p.list, &config.Problem{File: p.file, Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, args...)})
}

// err returns the problems in the order of their positions, joined, or nil.
func (p *problems) err() error {
	slices.SortStableFunc(p.list, func(a, b error) int {
		pa, pb := a.(*config.Problem), b.(*config.Problem)
		return cmp.Or(cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Column, pb.Column))
	})
	return errors.Join(p.list...)
}

// quoted describes a node for a message: a scalar's text, quoted and cut
// short, or the kind of a collection.
func quoted(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
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
