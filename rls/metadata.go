package rls

import (
	"slices"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// RefusedKey is the dynamic_metadata field of an OVER_LIMIT answer that
// lists the limiter rules (the names Limits gives) that refused it, in
// the order of the request's descriptors, each once. Envoy hands the
// metadata to later filters and access logs
// (%DYNAMIC_METADATA(envoy.filters.http.ratelimit:ratelimit.refused)%).
const RefusedKey = "ratelimit.refused"

// QuotaExceededKey is the dynamic_metadata field that lists the limiter
// rules of quota_mode limits (every limit under Options.QuotaMode) that a
// request went over (answered OK, as the reference's quota mode answers
// it), in the order of the request's
// descriptors, each once; absent when there are none.
const QuotaExceededKey = "ratelimit.quota_exceeded"

// addRefused sets res's dynamic_metadata when res is OVER_LIMIT: the
// rules of p's descriptors that refused in d. A shadow rule's would-be
// refusal is not one.
func (p *plan) addRefused(res *rlsv3.RateLimitResponse, d limiter.Decision) {
	if res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		return
	}
	p.addRules(res, RefusedKey, d, func(_ *envoy.Limit, r *limiter.RuleResult) bool { return r.Refused() })
}

// addQuotaExceeded adds to res's dynamic_metadata the quota_mode rules
// of p's descriptors that d went over (every rule, with all), if any.
func (p *plan) addQuotaExceeded(res *rlsv3.RateLimitResponse, d limiter.Decision, all bool) {
	p.addRules(res, QuotaExceededKey, d, func(l *envoy.Limit, r *limiter.RuleResult) bool {
		return (l.Quota || all) && !r.Allowed && !r.Undecided
	})
}

// addRules sets field key of res's dynamic_metadata to the rules of p's
// descriptors whose limit and result in d pass, each once, in order;
// nothing when none does.
func (p *plan) addRules(res *rlsv3.RateLimitResponse, key string, d limiter.Decision, pass func(*envoy.Limit, *limiter.RuleResult) bool) {
	var names []string
	for i, l := range p.limits {
		if j := p.check[i]; j >= 0 && pass(l, &d.Results[j]) && !slices.Contains(names, l.Rule) {
			names = append(names, l.Rule)
		}
	}
	if len(names) == 0 {
		return
	}
	values := make([]*structpb.Value, len(names))
	for i, n := range names {
		values[i] = structpb.NewStringValue(n)
	}
	if res.DynamicMetadata == nil {
		res.DynamicMetadata = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	res.DynamicMetadata.Fields[key] = structpb.NewListValue(&structpb.ListValue{Values: values})
}
