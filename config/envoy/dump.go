package envoy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Dump writes each configured rate_limit of configs, one a line, as the
// reference server's /rlconfig page does:
//
//	edge.tenant_acme.path_/api/*: unit=MINUTE requests_per_unit=600, shadow_mode: false, quota_mode: false
//
// The key is the domain and each descriptor's key, "_value" after a key
// that has one; an unlimited entry reads unit=UNKNOWN requests_per_unit=0.
// A limit over more than one unit (unit_multiplier, or a window, which
// the reference has not) says so after requests_per_unit
// ("unit_multiplier=5"), so that its line does not read as a limit per
// one unit. Lines are sorted within each config, and configs are written
// in the order given.
func Dump(configs ...*Config) string {
	var b strings.Builder
	for _, c := range configs {
		var lines []string
		var walk func(lv *level, path string)
		visit := func(e *entry, path string) {
			key := path + "." + e.key
			if e.value != "" {
				key += "_" + e.value // a wildcard's stars too
			}
			if l := e.limit; l != nil {
				mult := ""
				if l.multiplier > 1 {
					mult = fmt.Sprintf(" unit_multiplier=%d", l.multiplier)
				}
				lines = append(lines, fmt.Sprintf("%s: unit=%s requests_per_unit=%d%s, shadow_mode: %t, quota_mode: %t\n",
					key, cmp.Or(strings.ToUpper(l.unit.name), "UNKNOWN"), l.perUnit, mult, l.shadow, l.quota))
			}
			if e.next != nil {
				walk(e.next, key)
			}
		}
		walk = func(lv *level, path string) {
			for _, e := range lv.exact {
				visit(e, path)
			}
			for _, e := range lv.anyValue {
				visit(e, path)
			}
			for _, e := range lv.prefixes {
				visit(e, path)
			}
		}
		walk(c.top, c.Domain)
		slices.Sort(lines)
		for _, l := range lines {
			b.WriteString(l)
		}
	}
	return b.String()
}
