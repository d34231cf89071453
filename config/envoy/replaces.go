package envoy

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// parseReplaces parses a rate_limit's replaces list: [{name: X}, ...],
// each name non-empty; nothing ("replaces:" alone) is none, as the
// reference reads it.
func parseReplaces(p *problems, n *yaml.Node, field string) []replaced {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.add(n, field, "found %s; allowed: a list of {name: ...}", yamlnode.Describe(n))
		return nil
	}
	var list []replaced
	for i, r := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		var name *yaml.Node
		fields(p, r, f, map[string]func(*yaml.Node, string){
			"name": func(n *yaml.Node, field string) {
				before := len(p.list)
				if optStr(p, n, field) == "" && len(p.list) == before {
					p.add(n, field, "found %s; required: the name of the limit replaced", yamlnode.Describe(n))
					return
				}
				name = n
			},
		}, "name")
		if name != nil {
			list = append(list, replaced{name: name.Value, at: p.at(name, f+".name")})
		}
	}
	return list
}

// replacesItself reports a replaces entry naming l itself.
func (l *limit) replacesItself(p *problems) {
	for _, r := range l.replaces {
		if l.name != "" && r.name == l.name {
			p.addAt(r.at, "found %q, this limit's own name; allowed: the name of another limit", r.name)
		}
	}
}

// checkReplaces reports every replaces entry of c naming no limit of c:
// such an entry could never take effect (the reference accepts it).
func (c *Config) checkReplaces() error {
	names := map[string]bool{}
	for _, l := range c.limits {
		names[l.name] = l.name != ""
	}
	var errs []error
	for _, l := range c.limits {
		for _, r := range l.replaces {
			if !names[r.name] {
				pr := r.at
				pr.Message = fmt.Sprintf("found %q; allowed: the name of a limit of domain %q", r.name, c.Domain)
				errs = append(errs, &pr)
			}
		}
	}
	return errors.Join(errs...)
}

// finish completes a whole domain: its replaces entries checked, its
// limits named, its override limit made.
func (c *Config) finish() error {
	if err := c.checkReplaces(); err != nil {
		return err
	}
	c.name()
	c.override = overrideLimit(c.Domain)
	for _, l := range append(c.limits, c.override) {
		l.view = l.asView()
	}
	return nil
}
