package envoy

import (
	"strconv"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// name gives c's limits their limiter rule names, stable for a given
// file whatever the order of its entries: a limit's readable path,
// "domain.key_value.key" (the reference's way of writing a descriptor),
// when it is a valid rule name (1 to 64 bytes of [A-Za-z0-9._-]), the
// domain holds no '.' and does not start with '_', and no other limit of
// the file reads the same; otherwise "_", a hash of the exact path, and
// as much of the readable path as fits, for operators. A readable name
// never starts with '_', so the two forms never meet, and its first part
// is the whole domain, which keeps two domains' names apart.
func (c *Config) name() {
	type named struct {
		l        *limit
		readable string
		exact    string
	}
	var all []named
	count := map[string]int{}
	var walk func(lv *level, readable, exact string)
	walk = func(lv *level, readable, exact string) {
		visit := func(e *entry) {
			seg := e.key
			if e.value != "" {
				seg += "_" + e.value // a wildcard's stars too
			}
			r := readable + "." + seg
			x := exact + "\x00" + strconv.Quote(e.key) + strQuote(e)
			if e.limit != nil && !e.limit.unlimited {
				all = append(all, named{e.limit, r, x})
				count[r]++
			}
			if e.next != nil {
				walk(e.next, r, x)
			}
		}
		for _, e := range lv.exact {
			visit(e)
		}
		for _, e := range lv.anyValue {
			visit(e)
		}
		for _, e := range lv.prefixes {
			visit(e)
		}
	}
	walk(c.top, c.Domain, strconv.Quote(c.Domain))
	plainDomain := !strings.HasPrefix(c.Domain, "_") && !strings.Contains(c.Domain, ".")
	for _, n := range all {
		if plainDomain && count[n.readable] == 1 && readableName(n.readable) {
			n.l.rule = n.readable
			continue
		}
		n.l.rule = hashedName(n.readable, n.exact)
	}
}

// readableName reports whether a readable path is a valid rule name whose
// dots all separate parts: at most 64 bytes of [A-Za-z0-9._-], and no
// empty part.
func readableName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || strings.TrimLeft(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			return false
		}
	}
	return true
}

// hashedName is "_", the hash of the exact path, then the readable path
// with every byte a rule name cannot hold made '-', cut to 64 bytes.
func hashedName(readable, exact string) string {
	hint := []byte(readable)
	for i, c := range hint {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			hint[i] = '-'
		}
	}
	name := "_" + keyfunc.Hash(exact) + "." + string(hint)
	return name[:min(len(name), 64)]
}
