package envoy

import "strings"

// Match returns the limit that a descriptor of n entries (at(i) is the
// key and value of its i-th) reaches in c, or nil: the entries are
// followed in order, one level each; at each level an entry with the same key and
// value wins, then the first prefix wildcard whose prefix the value has,
// then an entry with the key and no value. The limit is that of the
// entry the last entry reaches; none when an entry reaches nothing. The
// Limit is c's own: do not change it.
//
// shared has bit i set when entry i reached a prefix with
// share_threshold: the entry's value is to be counted as the prefix, so
// that every value the prefix matches shares one count.
//
// at is called in order, at most once per entry, and not kept, so that
// a function literal over the caller's descriptor costs no allocation (a
// range-over-func iterator would: its loop's variables escape).
func (c *Config) Match(n int, at func(i int) (key, value string)) (l *Limit, shared uint64) {
	lv := c.top
	var e *entry
	for i := range n {
		if lv == nil {
			return nil, 0
		}
		if e = lv.find(at(i)); e == nil {
			return nil, 0
		}
		if e.shared {
			shared |= 1 << i
		}
		lv = e.next
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
