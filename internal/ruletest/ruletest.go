// Package ruletest holds rule sets shared by the tests of several packages.
package ruletest

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Six returns one rule of each algorithm, named by its code, each admitting
// size at once and refilling too slowly (an hour) to matter in a test.
func Six(size int) []limiter.Rule {
	return []limiter.Rule{
		{Name: "fw", Algorithm: algorithms.FixedWindow{Limit: size, Window: time.Hour}},
		{Name: "sl", Algorithm: algorithms.SlidingLog{Limit: size, Window: time.Hour}},
		{Name: "sw", Algorithm: algorithms.SlidingWindow{Limit: size, Window: time.Hour}},
		{Name: "tb", Algorithm: algorithms.TokenBucket{Capacity: size, Rate: 1, Period: time.Hour}},
		{Name: "lb", Algorithm: algorithms.LeakyBucket{Capacity: size, Rate: 1, Period: time.Hour}},
		{Name: "gc", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: size}},
	}
}

// Checks checks every rule of rules for identity, each at cost.
func Checks(rules []limiter.Rule, identity string, cost int) []limiter.Check {
	checks := make([]limiter.Check, len(rules))
	for i, r := range rules {
		checks[i] = limiter.Check{Rule: r.Name, Identity: identity, Cost: cost}
	}
	return checks
}
