package rls

import (
	"strconv"
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// TestPlanManyChecks: descriptors of one limit and identity meet in one
// check, their hits added, whether the request has a few checks (found
// one by one) or more than maxScan (found by index), in the order of
// their first descriptor.
func TestPlanManyChecks(t *testing.T) {
	c, err := Parse("p.yaml", []byte("domain: p\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, distinct := range []int{3, maxScan, maxScan + 1, 3 * maxScan} {
		req := &rlsv3.RateLimitRequest{Domain: "p"}
		for range 3 {
			for v := range distinct {
				req.Descriptors = append(req.Descriptors, &ratelimitv3.RateLimitDescriptor{
					Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "k", Value: strconv.Itoa(v)}}})
			}
		}
		p, err := newPlan(configDomain{c}, req, newOverrides(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.checks) != distinct {
			t.Fatalf("%d distinct values: %d checks, want %d", distinct, len(p.checks), distinct)
		}
		for i, j := range p.check {
			if want := i % distinct; j != want || p.checks[j].Cost != 3 || p.checks[j].Identity != identity(req.Descriptors[i], false, 0) {
				t.Errorf("%d distinct values: descriptor %d: check %d (%+v), want %d of cost 3 and its identity", distinct, i, j, p.checks[j], want)
			}
		}
	}
}

// TestPlanBoundsItsChecks: a request whose descriptors make more checks
// than one decision takes (256, limiter.Decide's bound) is refused with
// the count, before the limiter is asked; descriptors that meet in one
// check count once.
func TestPlanBoundsItsChecks(t *testing.T) {
	c, err := Parse("p.yaml", []byte("domain: p\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		distinct, repeats int
		refused           bool
	}{{256, 3, false}, {257, 1, true}} {
		req := &rlsv3.RateLimitRequest{Domain: "p"}
		for range tc.repeats {
			for v := range tc.distinct {
				req.Descriptors = append(req.Descriptors, &ratelimitv3.RateLimitDescriptor{
					Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "k", Value: strconv.Itoa(v)}}})
			}
		}
		_, err := newPlan(configDomain{c}, req, newOverrides(0))
		if refused := err != nil; refused != tc.refused || refused && !strings.Contains(err.Error(), "make 257 checks") {
			t.Errorf("%d distinct values, %d times: %v, refused: want %v", tc.distinct, tc.repeats, err, tc.refused)
		}
	}
}
