package rls

import (
	"strings"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

// match returns the limit of the entry that d's entries reach in c, or
// nil: the entries are followed in order, one level each; at each level
// an entry with the same key and value wins, then the first prefix
// wildcard whose prefix the value has, then an entry with the key and
// no value. The limit is that of the entry the last of d's entries
// reaches; none when an entry reaches nothing.
func (c *Config) match(d *ratelimitv3.RateLimitDescriptor) *limit {
	lv := c.top
	var e *entry
	for _, de := range d.GetEntries() {
		if lv == nil {
			return nil
		}
		if e = lv.find(de.GetKey(), de.GetValue()); e == nil {
			return nil
		}
		lv = e.next
	}
	if e == nil {
		return nil
	}
	return e.limit
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
