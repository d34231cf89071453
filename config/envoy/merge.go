package envoy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// merge adds the top-level descriptors of o, another file of c's domain,
// to c, as the reference merges a domain's files under
// MERGE_DOMAIN_CONFIG: whole, never combined with one of the same key
// and value. Such a pair is ambiguous (which limit, which nested
// descriptors?) and is an error at the second, naming the first's
// position.
func (c *Config) merge(o *Config) error {
	var errs []error
	for _, e := range o.top.entries() {
		if first := c.top.same(e); first != nil {
			pr := e.at
			pr.Message = fmt.Sprintf("found a descriptor with key %q and value %s that %s:%d:%d configures already in domain %q; allowed: one (MERGE_DOMAIN_CONFIG merges files' top-level descriptors, whole)",
				e.key, strQuote(e), first.at.File, first.at.Line, first.at.Column, c.Domain)
			errs = append(errs, &pr)
			continue
		}
		c.top.add(e)
	}
	c.limits = append(c.limits, o.limits...)
	return errors.Join(errs...)
}

// entries is lv's entries in the order of their positions.
func (lv *level) entries() []*entry {
	var all []*entry
	for _, e := range lv.exact {
		all = append(all, e)
	}
	for _, e := range lv.anyValue {
		all = append(all, e)
	}
	all = append(all, lv.prefixes...)
	slices.SortFunc(all, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(a.at.Line, b.at.Line), cmp.Compare(a.at.Column, b.at.Column))
	})
	return all
}
