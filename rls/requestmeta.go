package rls

import (
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// addRequest adds to res's dynamic_metadata what
// Options.ResponseDynamicMetadata says: p's request, and the merged
// metadata of the limits of its descriptors that res answers OK.
func (p *plan) addRequest(res *rlsv3.RateLimitResponse) {
	if res.DynamicMetadata == nil {
		res.DynamicMetadata = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	f := res.DynamicMetadata.Fields
	f["domain"] = structpb.NewStringValue(p.req.GetDomain())
	descriptors := make([]*structpb.Value, len(p.req.GetDescriptors()))
	for i, d := range p.req.GetDescriptors() {
		descriptors[i] = structpb.NewStructValue(descriptorStruct(d))
	}
	f["descriptors"] = structpb.NewListValue(&structpb.ListValue{Values: descriptors})
	if h := p.req.GetHitsAddend(); h != 0 {
		f["hitsAddend"] = structpb.NewNumberValue(float64(h))
	}
	merged := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for i, l := range p.limits {
		if l == nil || l.Unlimited || l.Metadata == nil || res.Statuses[i].GetCode() == rlsv3.RateLimitResponse_OVER_LIMIT {
			continue
		}
		if m, err := structpb.NewStruct(l.Metadata); err == nil { // a copy: the limit's is shared
			mergeStruct(merged, m)
		}
	}
	if len(merged.Fields) > 0 {
		f["metadata"] = structpb.NewStructValue(merged)
	}
}

// descriptorStruct is d as the dynamic metadata gives it: its entries as
// "key=value", its limit override as text and its hits_addend, when set.
func descriptorStruct(d *ratelimitv3.RateLimitDescriptor) *structpb.Struct {
	entries := make([]*structpb.Value, len(d.GetEntries()))
	for i, e := range d.GetEntries() {
		entries[i] = structpb.NewStringValue(e.GetKey() + "=" + e.GetValue())
	}
	s := &structpb.Struct{Fields: map[string]*structpb.Value{"entries": structpb.NewListValue(&structpb.ListValue{Values: entries})}}
	if o := d.GetLimit(); o != nil {
		s.Fields["limit"] = structpb.NewStringValue(o.String())
	}
	if h := d.GetHitsAddend(); h != nil {
		s.Fields["hitsAddend"] = structpb.NewNumberValue(float64(h.GetValue()))
	}
	return s
}

// mergeStruct merges src into dst: a key dst lacks is added, a mapping
// under a key both have is merged into dst's, and dst's value of any
// other key both have is kept.
func mergeStruct(dst, src *structpb.Struct) {
	for k, v := range src.GetFields() {
		have, ok := dst.Fields[k]
		switch {
		case !ok:
			dst.Fields[k] = v
		case have.GetStructValue() != nil && v.GetStructValue() != nil:
			mergeStruct(have.GetStructValue(), v.GetStructValue())
		}
	}
}
