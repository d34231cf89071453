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
//
// shared has bit i set when entry i reached a prefix with
// share_threshold: the entry's value is to be counted as the prefix, so
// that every value the prefix matches shares one count.
func (c *Config) Match(entries iter.Seq2[string, string]) (l *Limit, shared uint64) {
	lv := c.top
	var e *entry
	i := 0
	for key, value := range entries {
		if lv == nil {
			return nil, 0
		}
		if e = lv.find(key, value); e == nil {
			return nil, 0
		}
		if e.shared {
			shared |= 1 << i
		}
		lv, i = e.next, i+1
	}
	if e == nil || e.limit == nil {
		return nil, 0
	}
	return e.limit.view, shared
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
