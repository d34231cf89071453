package rls

import (
	"slices"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// RefusedKey is the dynamic_metadata field of an OVER_LIMIT answer that
// lists the limiter rules (the names Limits gives) that refused it, in
// the order of the request's descriptors, each once. Envoy hands the
// metadata to later filters and access logs
// (%DYNAMIC_METADATA(envoy.filters.http.ratelimit:ratelimit.refused)%).
const RefusedKey = "ratelimit.refused"

// addRefused sets res's dynamic_metadata when res is OVER_LIMIT: the
// rules of p's descriptors that refused in d. A shadow rule's would-be
// refusal is not one.
func (p *plan) addRefused(res *rlsv3.RateLimitResponse, d limiter.Decision) {
	if res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		return
	}
	var names []string
	for i, l := range p.limits {
		if j := p.check[i]; j >= 0 && d.Results[j].Refused() && !slices.Contains(names, l.Rule) {
			names = append(names, l.Rule)
		}
	}
	values := make([]*structpb.Value, len(names))
	for i, n := range names {
		values[i] = structpb.NewStringValue(n)
	}
	res.DynamicMetadata = &structpb.Struct{Fields: map[string]*structpb.Value{
		RefusedKey: structpb.NewListValue(&structpb.ListValue{Values: values}),
	}}
}
