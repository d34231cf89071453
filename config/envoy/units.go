package envoy

import (
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// unit is a rate_limit's unit: its length, and its name (a key of units;
// "" for none).
type unit struct {
	length time.Duration
	name   string
}

const day = 24 * time.Hour

// units are the reference's units, by their name in a file (any case). A
// month is 30 days and a year 365, counted in windows aligned to the
// Unix epoch, as the reference counts them.
var units = map[string]unit{
	"second": {time.Second, "second"},
	"minute": {time.Minute, "minute"},
	"hour":   {time.Hour, "hour"},
	"day":    {day, "day"},
	"week":   {7 * day, "week"},
	"month":  {30 * day, "month"},
	"year":   {365 * day, "year"},
}

// limitNodes are the nodes of a rate_limit's keys that later checks
// report problems at; nil when the key is absent.
type limitNodes struct {
	rate, unit, perUnit, multiplier, window, algorithm, burst, lease *yaml.Node
	zero                                                             bool // requests_per_unit is a valid 0
	// badUnit is a unit that is none of units: a problem, but beside
	// unlimited: true, which ignores it as the reference does.
	badUnit *yaml.Node
}

// parseLimit parses a rate_limit mapping, of a shadow_mode descriptor when
// shadow, a quota_mode one when quota; nil when it has problems.
func parseLimit(p *problems, n *yaml.Node, field string, shadow, quota bool) *limit {
	before := len(p.list)
	l := &limit{shadow: shadow, quota: quota, multiplier: 1}
	at := limitNodes{rate: n}
	fields(p, n, field, map[string]func(*yaml.Node, string){
		"unit": func(n *yaml.Node, f string) {
			before := len(p.list)
			u, ok := units[strings.ToLower(optStr(p, n, f))]
			if ok {
				at.unit, l.unit = n, u
			} else if len(p.list) == before {
				at.badUnit = n // a problem unless unlimited, which ignores it
			}
		},
		"requests_per_unit": func(n *yaml.Node, f string) {
			var ok bool
			at.perUnit = n
			l.perUnit, ok = countFrom(p, n, f, 0)
			at.zero = ok && l.perUnit == 0
		},
		"unit_multiplier": func(n *yaml.Node, f string) {
			at.multiplier = n
			l.multiplier = uint32(count(p, n, f))
		},
		"window": func(n *yaml.Node, f string) {
			at.window = n
			l.unit, l.multiplier = window(p, n, f)
		},
		"algorithm": func(n *yaml.Node, f string) { at.algorithm, l.alg = n, algorithmOf(p, n, f) },
		"burst":     func(n *yaml.Node, f string) { at.burst, l.burst = n, count(p, n, f) },
		"lease":     func(n *yaml.Node, f string) { at.lease, l.lease = n, duration(p, n, f) },
		"unlimited": func(n *yaml.Node, f string) { l.unlimited = boolean(p, n, f) },
		"name":      func(n *yaml.Node, f string) { l.name = optStr(p, n, f) },
		"replaces":  func(n *yaml.Node, f string) { l.replaces = parseReplaces(p, n, f) }, // nothing: none
	})
	l.replacesItself(p)
	if at.badUnit != nil && !l.unlimited {
		p.add(at.badUnit, field+".unit", "found %s; allowed: second, minute, hour, day, week, month, year", yamlnode.Describe(at.badUnit))
		at.unit = at.badUnit // found, if not valid: no second problem for its absence
	}
	if n.Kind == yaml.MappingNode {
		at.check(p, l, field)
	}
	if len(p.list) > before {
		return nil
	}
	if l.unlimited {
		return l
	}
	if l.unit.length > math.MaxInt64/time.Duration(l.multiplier) {
		p.add(at.multiplier, field+".unit_multiplier", "found %s: %d %ss overflow a duration (292 years at most); allowed: a smaller unit_multiplier", yamlnode.Describe(at.multiplier), l.multiplier, l.unit.name)
		return nil
	}
	l.unit.length *= time.Duration(l.multiplier)
	if l.validate(p, at, field); len(p.list) > before {
		return nil
	}
	return l
}

// check reports keys that do not go together, or one that is missing.
func (at limitNodes) check(p *problems, l *limit, field string) {
	switch {
	case l.unlimited && at.unit != nil:
		p.add(at.unit, field+".unit", "found a unit with unlimited: true; allowed: no unit")
	case l.unlimited && at.perUnit != nil:
		p.add(at.perUnit, field+".requests_per_unit", "found requests_per_unit with unlimited: true; allowed: none")
	case l.unlimited:
		for key, n := range map[string]*yaml.Node{"unit_multiplier": at.multiplier, "window": at.window, "algorithm": at.algorithm, "burst": at.burst, "lease": at.lease} {
			if n != nil {
				p.add(n, field+"."+key, "found %s with unlimited: true; allowed: none", key)
			}
		}
	case at.window != nil && at.unit != nil:
		p.add(at.window, field+".window", "found a window with a unit; allowed: one of them")
	case at.window != nil && at.multiplier != nil:
		p.add(at.multiplier, field+".unit_multiplier", "found unit_multiplier with a window; allowed: a window alone")
	case at.unit == nil && at.window == nil:
		p.add(at.rate, field+".unit", "found nothing; required: unit or window (or unlimited: true)")
	case at.perUnit == nil:
		p.add(at.rate, field+".requests_per_unit", "found nothing; required: requests_per_unit (or unlimited: true)")
	case at.burst != nil && !l.alg.bursty():
		p.add(at.burst, field+".burst", "found a burst on %s; allowed: a burst only with token_bucket, leaky_bucket or gcra", orFixed(l.alg))
	case at.zero && orFixed(l.alg) != fixedWindow:
		p.add(at.perUnit, field+".requests_per_unit", "found 0 (refuse every request) on %s; allowed: 0 only with fixed_window", orFixed(l.alg))
	case at.zero && at.lease != nil:
		p.add(at.lease, field+".lease", "found a lease with requests_per_unit 0 (refuse every request); allowed: none")
	}
}

// count is n's whole number from 1 to 2^32-1, or 0 with a problem.
func count(p *problems, n *yaml.Node, field string) int {
	v, _ := countFrom(p, n, field, 1)
	return v
}

// countFrom is n's whole number from least (0 or 1) to 2^32-1, or 0 and
// false with a problem.
func countFrom(p *problems, n *yaml.Node, field string, least int) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil || v < least || v > 1<<32-1 {
		p.add(n, field, "found %s; allowed: a whole number from %d to 4294967295", yamlnode.Describe(n), least)
		return 0, false
	}
	return v, true
}

// duration is n's positive duration ("1s", "1m30s"), or 0 with a problem.
func duration(p *problems, n *yaml.Node, field string) time.Duration {
	d, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || d <= 0 {
		p.add(n, field, "found %s; allowed: a positive duration such as 500ms, 90s or 2h", yamlnode.Describe(n))
		return 0
	}
	return d
}

// window is the unit and multiplier of n, a window given as a duration:
// the longest unit it is a whole number of, so that current_limit says
// it (90s: 90 seconds, 2h: 2 hours). A window that is not a whole number
// of seconds is a problem: RLS's units cannot say it.
func window(p *problems, n *yaml.Node, field string) (unit, uint32) {
	d := duration(p, n, field)
	if d == 0 {
		return unit{}, 1
	}
	name, multiplier, ok := UnitOf(d)
	if !ok {
		p.add(n, field, "found %s; allowed: a whole number of seconds (RLS reports a limit in whole units)", yamlnode.Describe(n))
		return unit{}, 1
	}
	return units[name], multiplier
}

// UnitOf is window as an RLS response reports a limit: the largest of the
// reference's units that divides it ("second" ... "year", a month 30 days
// and a year 365), and how many of it the window is. ok is false when no
// unit divides it, or the count does not fit the response's uint32.
func UnitOf(window time.Duration) (name string, multiplier uint32, ok bool) {
	var best unit
	for _, u := range units {
		if window > 0 && window%u.length == 0 && u.length > best.length {
			best = u
		}
	}
	if best.length == 0 || window/best.length > 1<<32-1 {
		return "", 0, false
	}
	return best.name, uint32(window / best.length), true
}

// algorithmOf is n's algorithm, or "" with a problem: one that is not the
// library's, or one a descriptor cannot use, with the reason.
func algorithmOf(p *problems, n *yaml.Node, field string) algorithm {
	before := len(p.list)
	w := str(p, n, field)
	if len(p.list) > before {
		return ""
	}
	if why, ok := refusedAlgorithms[w]; ok {
		p.add(n, field, "found %s: refused for RLS, because %s; allowed: %s", yamlnode.Describe(n), why, wordList(algorithmWords))
		return ""
	}
	for _, a := range algorithmWords {
		if string(a) == w {
			return a
		}
	}
	p.add(n, field, "found %s; allowed: %s", yamlnode.Describe(n), wordList(algorithmWords))
	return ""
}

// orFixed is a's word, fixed_window for "".
func orFixed(a algorithm) algorithm {
	if a == "" {
		return fixedWindow
	}
	return a
}
