package rls

import (
	"strings"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"go.yaml.in/yaml/v3"
)

// unit is a rate_limit's unit: its length, and its name in responses.
type unit struct {
	length time.Duration
	proto  rlsv3.RateLimitResponse_RateLimit_Unit
}

const day = 24 * time.Hour

// units are the reference's units, by their name in a file (any case). A
// month is 30 days and a year 365, counted in windows aligned to the
// Unix epoch, as the reference counts them.
var units = map[string]unit{
	"second": {time.Second, rlsv3.RateLimitResponse_RateLimit_SECOND},
	"minute": {time.Minute, rlsv3.RateLimitResponse_RateLimit_MINUTE},
	"hour":   {time.Hour, rlsv3.RateLimitResponse_RateLimit_HOUR},
	"day":    {day, rlsv3.RateLimitResponse_RateLimit_DAY},
	"week":   {7 * day, rlsv3.RateLimitResponse_RateLimit_WEEK},
	"month":  {30 * day, rlsv3.RateLimitResponse_RateLimit_MONTH},
	"year":   {365 * day, rlsv3.RateLimitResponse_RateLimit_YEAR},
}

// parseLimit parses a rate_limit mapping; nil when it has problems.
func parseLimit(p *problems, n *yaml.Node, field string) *limit {
	before := len(p.list)
	l := &limit{}
	var unitNode, perUnitNode *yaml.Node
	fields(p, n, field, map[string]func(*yaml.Node, string){
		"unit": func(n *yaml.Node, f string) {
			unitNode = n
			u, ok := units[strings.ToLower(str(p, n, f))]
			if !ok {
				p.add(n, f, "found %s; allowed: second, minute, hour, day, week, month, year", quoted(n))
			}
			l.unit = u
		},
		"requests_per_unit": func(n *yaml.Node, f string) {
			perUnitNode = n
			if n.Kind != yaml.ScalarNode || n.Decode(&l.perUnit) != nil || l.perUnit <= 0 || l.perUnit > 1<<32-1 {
				p.add(n, f, "found %s; allowed: a whole number from 1 to 4294967295", quoted(n))
			}
		},
		"unlimited": func(n *yaml.Node, f string) { l.unlimited = boolean(p, n, f) },
		"name":      func(n *yaml.Node, f string) { l.name = str(p, n, f) },
		"replaces": func(n *yaml.Node, f string) {
			p.add(n, f, "found replaces; allowed: not yet (see docs/envoy.md)")
		},
	})
	switch {
	case l.unlimited && unitNode != nil:
		p.add(unitNode, field+".unit", "found a unit with unlimited: true; allowed: no unit")
	case l.unlimited && perUnitNode != nil:
		p.add(perUnitNode, field+".requests_per_unit", "found requests_per_unit with unlimited: true; allowed: none")
	case !l.unlimited && unitNode == nil && n.Kind == yaml.MappingNode:
		p.add(n, field+".unit", "found nothing; required: unit (or unlimited: true)")
	case !l.unlimited && perUnitNode == nil && n.Kind == yaml.MappingNode:
		p.add(n, field+".requests_per_unit", "found nothing; required: requests_per_unit (or unlimited: true)")
	}
	if len(p.list) > before {
		return nil
	}
	return l
}
