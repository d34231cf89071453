package parse

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// parser walks a file's YAML nodes, collecting every problem it finds
// rather than stopping at the first.
type parser struct {
	file string
	errs []error
}

// err returns the problems found, in the order of their lines, joined,
// or nil.
func (p *parser) err() error {
	slices.SortStableFunc(p.errs, func(a, b error) int {
		ea, _ := a.(*Problem)
		eb, _ := b.(*Problem)
		return cmp.Or(cmp.Compare(ea.Line, eb.Line), cmp.Compare(ea.Column, eb.Column))
	})
	return errors.Join(p.errs...)
}

// fail records a problem of field at node n.
func (p *parser) fail(n *yaml.Node, field, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	p.errs = append(p.errs, &Problem{File: p.file, Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, args...)})
}

// bad records that field at n holds something other than what is allowed.
func (p *parser) bad(n *yaml.Node, field, allowed string) {
	p.fail(n, field, "found %s; allowed: %s", yamlnode.Describe(n), allowed)
}

// fields reads mapping n at field: its values by key, restricted to
// allowed. Unknown and repeated keys are problems; so is a node that is
// not a mapping (nil is returned).
func (p *parser) fields(n *yaml.Node, field string, allowed ...string) map[string]*yaml.Node {
	n = yamlnode.Deref(n)
	if n.Kind != yaml.MappingNode {
		p.bad(n, field, "a mapping of "+strings.Join(allowed, ", "))
		return nil
	}
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	keys := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlnode.Deref(n.Content[i+1])
		switch {
		case !slices.Contains(allowed, k.Value):
			p.fail(k, join(field, k.Value), "found unknown field %s; allowed: %s", strconv.Quote(k.Value), strings.Join(allowed, ", "))
		case keys[k.Value] != nil:
			p.fail(k, join(field, k.Value), "found the field a second time; allowed once (first at line %d)", keys[k.Value].Line)
		default:
			keys[k.Value], m[k.Value] = k, v
		}
	}
	return m
}

// join is the path of field sub of field.
func join(field, sub string) string {
	if field == "" {
		return sub
	}
	return field + "." + sub
}

// index is the path of the i-th entry of list field.
func index(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// require records a problem for each of names missing from m, a mapping
// read at n.
func (p *parser) require(n *yaml.Node, m map[string]*yaml.Node, field string, names ...string) {
	for _, name := range names {
		if _, ok := m[name]; !ok {
			p.fail(n, join(field, name), "found no value; required")
		}
	}
}

// str reads a non-empty scalar as text.
func (p *parser) str(n *yaml.Node, field, allowed string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Value == "" {
		p.bad(n, field, allowed)
		return "", false
	}
	return n.Value, true
}

// boolean reads true or false.
func (p *parser) boolean(n *yaml.Node, field string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		p.bad(n, field, "true or false")
		return false
	}
	b, _ := strconv.ParseBool(strings.ToLower(n.Value))
	return b
}

// integer reads a whole number from lo to hi.
func (p *parser) integer(n *yaml.Node, field string, lo, hi int) (int, bool) {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || v < lo || v > hi {
		p.bad(n, field, fmt.Sprintf("a whole number from %d to %d", lo, hi))
		return 0, false
	}
	return v, true
}

// list reads a sequence, calling each for every entry with its path.
func (p *parser) list(n *yaml.Node, field, allowed string, each func(n *yaml.Node, field string)) {
	if n.Kind != yaml.SequenceNode {
		p.bad(n, field, "a list of "+allowed)
		return
	}
	for i, e := range n.Content {
		each(yamlnode.Deref(e), index(field, i))
	}
}

// entry is where a value of a list is in the file, for a problem of it:
// its node and its field path, which holds its index in the file's list.
type entry struct {
	node  *yaml.Node
	field string
}

// strs reads a list of non-empty scalars, with where each is (an entry
// that is not one is reported and left out, so the file's index of a
// value can be another than its own).
func (p *parser) strs(n *yaml.Node, field, allowed string) (vals []string, at []entry) {
	p.list(n, field, allowed, func(e *yaml.Node, f string) {
		if s, ok := p.str(e, f, allowed); ok {
			vals, at = append(vals, s), append(at, entry{e, f})
		}
	})
	return vals, at
}
