package envoy

import (
	"iter"
	"strings"
)

// Match returns the limit that a descriptor of entries (its keys and
// values, in order) reaches in c, or nil: the entries are followed in
// order, one level each; at each level an entry with the same key and
// value wins, then the first prefix wildcard whose prefix the value has,
// then an entry with the key and no value. The limit is that of the
// entry the last entry reaches; none when an entry reaches nothing. The
// Limit is c's own: do not change it.
func (c *Config) Match(entries iter.Seq2[string, string]) *Limit {
	lv := c.top
	var e *entry
	for key, value := range entries {
		if lv == nil {
			return nil
		}
		if e = lv.find(key, value); e == nil {
			return nil
		}
		lv = e.next
	}
	if e == nil || e.limit == nil {
		return nil
	}
	return e.limit.view
}

// find is the entry of lv for key and value, or nil.
func (lv *level) find(key, value string) *entry {
	if e := lv.exact[pair{key, value}]; e != nil {
		return e
	}
	for _, e := range lv.prefixes {
		if e.key == key && strings.HasPrefix(value, e.value) {
			return e
		}
	}
	return lv.anyValue[key]
}
