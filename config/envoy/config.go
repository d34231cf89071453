package envoy

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// Config is one domain's limits in the reference server's format:
//
//	domain: edge
//	descriptors:
//	  - key: remote_address
//	    rate_limit: {unit: second, requests_per_unit: 10}
//	  - key: path
//	    value: /api/*
//	    shadow_mode: true
//	    rate_limit: {unit: minute, requests_per_unit: 600, name: api}
//
// A descriptor has a key, an optional value (a * in it, anywhere, makes
// it a wildcard: any run of characters there), an optional rate_limit,
// shadow_mode, quota_mode and nested descriptors. quota_mode: true
// decides its limit as shadow_mode does (it never refuses; its would-be
// refusal consumes nothing) and answers a descriptor over it OK, with
// the limit and what remains, as the reference's quota mode does.
// share_threshold: true on a wildcard makes every value it matches count
// as the wildcard itself: one count for them all, under its limit or
// those of its nested descriptors.
type Config struct {
	// Domain is the domain requests name to be decided on this
	// configuration.
	Domain string
	top    *level
	limits []*limit // every rate_limit, unlimited ones too, in file order
	// override is the limit under which a descriptor's limit override is
	// decided when the descriptor matches no limit, or an unlimited one.
	override *limit
}

// level is the descriptors configured at one depth under one parent.
type level struct {
	exact    map[pair]*entry // key and value
	anyValue map[string]*entry
	prefixes []*entry        // wildcards (values with a *), in file order
	prefixed map[pair]*entry // wildcards by key and value
}

// pair is a key and a value.
type pair struct{ key, value string }

// entry is one configured descriptor.
type entry struct {
	key, value string         // value as the file gives it, its stars too
	prefix     bool           // value has a *: a wildcard
	parts      []string       // a wildcard's value split at its stars
	shared     bool           // share_threshold: a wildcard's values count as one
	limit      *limit         // nil: no rate_limit
	next       *level         // nested descriptors; nil: none
	at         config.Problem // its position and field; no message
}

// limit is a descriptor's rate_limit.
type limit struct {
	name       string // rate_limit.name, reported back as given
	unit       unit   // its length is the whole window: the unit times multiplier
	perUnit    int
	multiplier uint32 // of the unit; 0 or 1: none
	alg        algorithm
	burst      int           // a bucket's capacity or GCRA's burst; 0: perUnit
	lease      time.Duration // the limiter rule's Lease
	unlimited  bool
	shadow     bool
	quota      bool   // quota_mode: decided as a shadow rule, answered OK over it
	rule       string // the limiter rule's name; "" when unlimited
	replaces   []replaced
	metadata   map[string]any // its descriptor's metadata; nil for none
	view       *Limit         // as Match gives it; set once the domain is whole
}

// replaced is a rate_limit's replaces entry: the name of the limits it
// replaces, and where the file says so, for problems found once the
// domain is whole.
type replaced struct {
	name string
	at   config.Problem // its position and field; no message
}

// Parse parses and validates one file of the reference server's
// configuration; file names it in errors. Every problem is a
// *config.Problem (file:line:column, the field, what was found), all of
// them joined, and each wraps ratelimit.ErrConfig.
func Parse(file string, data []byte) (*Config, error) {
	c, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// parse is Parse of one file that may yet be merged with others of its
// domain: its limits are neither named nor their replaces checked.
func parse(file string, data []byte) (*Config, error) {
	p := &problems{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.add(nil, "(syntax)", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, p.err()
	}
	if len(doc.Content) == 0 {
		p.add(&doc, "(file)", "found nothing; required: a mapping with domain and descriptors")
		return nil, p.err()
	}
	if at, msg := yamlnode.Aliases(&doc); at != nil {
		p.add(at, "(file)", "%s", msg)
		return nil, p.err()
	}
	c := &Config{top: newLevel()}
	fields(p, doc.Content[0], "", map[string]func(*yaml.Node, string){
		"domain": func(n *yaml.Node, field string) {
			if c.Domain = str(p, n, field); c.Domain == "" {
				p.add(n, field, "found %s; required: a non-empty domain", yamlnode.Describe(n))
			}
		},
		"descriptors": func(n *yaml.Node, field string) { c.descriptors(p, n, field, c.top, nil) },
	}, "domain")
	if err := p.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// maxDepth is how deep descriptors may be nested: far deeper than any
// request's descriptor, whose entries each match a level. Each level's
// fields are named by their whole path, so the cost of a file grows with
// the square of its depth.
const maxDepth = 64

// descriptors parses a list of descriptors into lv; path is the parent's
// entries, root first. A null ("descriptors:" with nothing after it) is
// no descriptors, as the reference reads it.
func (c *Config) descriptors(p *problems, n *yaml.Node, field string, lv *level, path []*entry) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if len(path) == maxDepth && len(n.Content) > 0 {
		p.add(n, field, "found descriptors nested %d deep; allowed: at most %d", maxDepth+1, maxDepth)
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.add(n, field, "found %s; allowed: a list of descriptors", yamlnode.Describe(n))
		return
	}
	for i, d := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		e := &entry{}
		var rate, shadow, quota, shared, nested, meta *yaml.Node
		var valueNode *yaml.Node
		fields(p, d, f, map[string]func(*yaml.Node, string){
			"key": func(n *yaml.Node, field string) {
				if e.key = str(p, n, field); e.key == "" {
					p.add(n, field, "found %s; required: a non-empty key", yamlnode.Describe(n))
				}
			},
			"value":           func(n *yaml.Node, field string) { e.value, valueNode = optStr(p, n, field), n },
			"rate_limit":      func(n *yaml.Node, _ string) { rate = n },
			"shadow_mode":     func(n *yaml.Node, _ string) { shadow = n },
			"quota_mode":      func(n *yaml.Node, _ string) { quota = n },
			"share_threshold": func(n *yaml.Node, _ string) { shared = n },
			"descriptors":     func(n *yaml.Node, _ string) { nested = n },
			"detailed_metric": func(n *yaml.Node, field string) { boolean(p, n, field) },
			"value_to_metric": func(n *yaml.Node, field string) { boolean(p, n, field) },
			"metadata":        func(n *yaml.Node, _ string) { meta = n },
		}, "key")
		if strings.Contains(e.value, "*") {
			e.prefix, e.parts = true, strings.Split(e.value, "*")
		}
		isShadow := shadow != nil && boolean(p, shadow, f+".shadow_mode")
		isQuota := quota != nil && boolean(p, quota, f+".quota_mode")
		if shared != nil && boolean(p, shared, f+".share_threshold") {
			switch {
			case !e.prefix:
				p.add(shared, f+".share_threshold", "found true on value %s; allowed only on a wildcard (a value with a *)", strQuote(e))
			case len(path) >= maxSharedDepth:
				p.add(shared, f+".share_threshold", "found true at depth %d; allowed at depths below %d", len(path)+1, maxSharedDepth+1)
			default:
				e.shared = true
			}
		}
		if rate != nil {
			e.limit = parseLimit(p, rate, f+".rate_limit", isShadow, isQuota)
			if e.limit != nil {
				c.limits = append(c.limits, e.limit)
			}
		}
		if meta != nil {
			if m := metadata(p, meta, f+".metadata"); e.limit != nil {
				e.limit.metadata = m
			}
		}
		at := d
		if valueNode != nil {
			at = valueNode
		}
		e.at = p.at(at, f)
		if !lv.add(e) {
			p.add(at, f, "found a second descriptor with key %q and value %s at this level; allowed: one", e.key, strQuote(e))
		}
		if nested != nil {
			e.next = newLevel()
			c.descriptors(p, nested, f+".descriptors", e.next, append(path[:len(path):len(path)], e))
		}
	}
}

// metadata reads a descriptor's metadata: a mapping of anything, or
// nothing (nil), as the reference reads it, which returns the metadata of
// a descriptor's limit in its dynamic metadata under
// RESPONSE_DYNAMIC_METADATA (Limit.Metadata).
func metadata(p *problems, n *yaml.Node, field string) map[string]any {
	n = yamlnode.Deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.add(n, field, "found %s; allowed: a mapping", yamlnode.Describe(n))
		return nil
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		p.add(n, field, "found a mapping YAML cannot read (%v); allowed: a mapping of plain values", err)
		return nil
	}
	return plainMap(m)
}

// plainMap is m with every value plain (see plain), for a reader that
// knows only JSON's values (a protobuf Struct).
func plainMap(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = plain(v)
	}
	return m
}

// plain is v, a value YAML decoded, as JSON's values: a mapping of other
// keys than strings keyed by their text, a timestamp as RFC 3339 text, a
// sequence's values plain; anything else as it is.
func plain(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return plainMap(v)
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = plain(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = plain(e)
		}
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	}
	return v
}

// maxSharedDepth bounds the depth of a share_threshold: Match reports the
// shared entries in a uint64.
const maxSharedDepth = 64

// strQuote is e's value as the file gives it, quoted.
func strQuote(e *entry) string { return fmt.Sprintf("%q", e.value) }

func newLevel() *level {
	return &level{exact: map[pair]*entry{}, anyValue: map[string]*entry{}, prefixed: map[pair]*entry{}}
}

// add adds e to lv, false when lv has one of its key and value already.
func (lv *level) add(e *entry) bool {
	if lv.same(e) != nil {
		return false
	}
	switch {
	case e.prefix:
		lv.prefixes = append(lv.prefixes, e)
		lv.prefixed[pair{e.key, e.value}] = e
	case e.value == "":
		lv.anyValue[e.key] = e
	default:
		lv.exact[pair{e.key, e.value}] = e
	}
	return true
}

// same is lv's entry of e's key and value (wildcard or not), or nil.
func (lv *level) same(e *entry) *entry {
	switch {
	case e.prefix:
		return lv.prefixed[pair{e.key, e.value}]
	case e.value == "":
		return lv.anyValue[e.key]
	}
	return lv.exact[pair{e.key, e.value}]
}
