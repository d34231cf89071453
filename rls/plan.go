package rls

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// plan is what a request asks of the limiter: per descriptor its limit
// (nil: none) and the index of its check, and the checks, one per limit
// and identity (descriptors that meet in one add their hits).
type plan struct {
	limits []*limit
	check  []int // per descriptor; -1: no check
	checks []limiter.Check
}

// maxHits bounds a descriptor's hits: no limit is larger.
const maxHits = math.MaxUint32

// newPlan matches req's descriptors in c (nil: a domain with no limits),
// a descriptor's limit override applied through ov.
func newPlan(c domain, req *rlsv3.RateLimitRequest, ov *overrides) (*plan, error) {
	n := len(req.GetDescriptors())
	p := &plan{limits: make([]*limit, n), check: make([]int, n)}
	var seen map[limiter.Check]int // by rule and identity alone
	for i, d := range req.GetDescriptors() {
		p.check[i] = -1
		if d.GetIsNegativeHits() {
			return nil, fmt.Errorf("ratelimit: descriptor %d: is_negative_hits is refused: units can be given back exactly only against the decision that took them, and an RLS call names none, so a give-back could return more than was taken", i)
		}
		hits := uint64(max(req.GetHitsAddend(), 1))
		if h := d.GetHitsAddend(); h != nil {
			hits = h.GetValue()
		}
		if hits > maxHits {
			return nil, fmt.Errorf("ratelimit: descriptor %d: hits_addend %d is above %d", i, hits, uint64(maxHits))
		}
		if c == nil {
			continue
		}
		l, id, planned, err := c.limitOf(d)
		if err != nil {
			return nil, fmt.Errorf("ratelimit: descriptor %d: %w", i, err)
		}
		if l == nil || l.unlimited {
			p.limits[i] = l
			continue
		}
		if o := d.GetLimit(); o != nil {
			var over algorithms.Algorithm
			if l, over, err = ov.apply(l, i, o); err != nil {
				return nil, err
			}
			if over != nil { // nil: the override is l's own limit
				planned = over
			}
		}
		p.limits[i] = l
		k := limiter.Check{Rule: l.rule, Identity: id}
		j, ok := seen[k]
		switch {
		case !ok:
			if seen == nil {
				seen = map[limiter.Check]int{}
			}
			j = len(p.checks)
			seen[k] = j
			k.Plan = planned
			p.checks = append(p.checks, k)
		case p.checks[j].Plan != planned:
			return nil, fmt.Errorf("ratelimit: descriptor %d: the same limit and values as descriptor %d under another limit override", i, slices.Index(p.check, j))
		}
		p.checks[j].Cost += int(hits)
		p.check[i] = j
	}
	return p, nil
}

// identity is who a descriptor's check limits: its entries' values, each
// quoted (so that no value can pass for two, nor two for one) and hashed
// (so that the key is short, holds no raw bytes a client chose, and
// routes on Redis Cluster like any other).
func identity(d *ratelimitv3.RateLimitDescriptor) string {
	var b strings.Builder
	for _, e := range d.GetEntries() {
		b.WriteString(strconv.Quote(e.GetValue()))
	}
	return keyfunc.Hash(b.String())
}
