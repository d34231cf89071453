package envoy

import "strings"

// Match returns the limit that a descriptor of n entries (at(i) is the
// key and value of its i-th) reaches in c, or nil: the entries are
// followed in order, one level each; at each level an entry with the same key and
// value wins, then the first wildcard the value matches (each * of it
// any run of characters, empty too, as the reference matches them), then
// an entry with the key and no value. The limit is that of the
// entry the last entry reaches; none when an entry reaches nothing. The
// Limit is c's own: do not change it.
//
// shared has bit i set when entry i reached a wildcard with
// share_threshold: the entry's value is to be counted as the wildcard, so
// that every value the wildcard matches shares one count.
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
		if e.key == key && matches(e.parts, value) {
			return e
		}
	}
	return lv.anyValue[key]
}

// matches reports whether value matches a wildcard split at its stars
// into parts (two at least): it starts with the first part and ends with
// the last, and holds the others in order between them, each star any
// run of characters.
func matches(parts []string, value string) bool {
	first, last := parts[0], parts[len(parts)-1]
	if len(value) < len(first)+len(last) || !strings.HasPrefix(value, first) || !strings.HasSuffix(value, last) {
		return false
	}
	rest := value[len(first) : len(value)-len(last)]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return true
}
