package envoy

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
	p.addAt(p.at(n, field), format, args...)
}

// at is the position of node n (the file's start when nil) and field,
// a problem without its message.
func (p *problems) at(n *yaml.Node, field string) config.Problem {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	return config.Problem{File: p.file, Line: line, Column: col, Field: field}
}

// addAt records a problem at position at.
func (p *problems) addAt(at config.Problem, format string, args ...any) {
	at.Message = fmt.Sprintf(format, args...)
	p.list = append(p.list, &at)
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
