package rls_test

import (
	"context"
	"reflect"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// metaConfig gives two limits metadata that share a key.
const metaConfig = `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 2}
    metadata: {team: edge, tags: {tier: free}, first: ip}
  - key: tenant
    rate_limit: {unit: hour, requests_per_unit: 100}
    metadata: {team: billing, tags: {owner: b}, first: tenant}
  - key: open
    rate_limit: {unlimited: true}
    metadata: {never: true}
`

// TestResponseDynamicMetadata: with ResponseDynamicMetadata, as the
// reference's RESPONSE_DYNAMIC_METADATA, every answer's dynamic_metadata
// carries the request (its domain, its descriptors' entries, override and
// hits_addend, its own hits_addend) and the metadata of the limits of the
// descriptors answered OK, merged in order (the first value of a key
// wins; mappings merge); an unlimited descriptor's and a refused one's
// are left out, and the refusing rules are listed beside them.
func TestResponseDynamicMetadata(t *testing.T) {
	c, err := rls.Parse("test.yaml", []byte(metaConfig))
	if err != nil {
		t.Fatal(err)
	}
	ip := rls.Limits(c)[0].Name
	eachBackend(t, func(t *testing.T, b backend) {
		s := serve(t, b, metaConfig, rls.Options{ResponseDynamicMetadata: true})
		req := &rlsv3.RateLimitRequest{Domain: "edge", HitsAddend: 1, Descriptors: []*ratelimitv3.RateLimitDescriptor{
			desc("remote_address", "a"), hits(desc("tenant", "t"), 2), desc("open", "x")}}
		res, err := s.ShouldRateLimit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"domain": "edge",
			"descriptors": []any{
				map[string]any{"entries": []any{"remote_address=a"}},
				map[string]any{"entries": []any{"tenant=t"}, "hitsAddend": 2.0},
				map[string]any{"entries": []any{"open=x"}},
			},
			"hitsAddend": 1.0,
			"metadata":   map[string]any{"team": "edge", "first": "ip", "tags": map[string]any{"tier": "free", "owner": "b"}},
		}
		if got := res.GetDynamicMetadata().AsMap(); res.OverallCode != rlsv3.RateLimitResponse_OK || !reflect.DeepEqual(got, want) {
			t.Fatalf("admitted: %v, dynamic_metadata %#v, want OK and %#v", res.OverallCode, got, want)
		}

		req.Descriptors[0] = hits(desc("remote_address", "a"), 5) // over its limit of 2: the request is refused
		if res, err = s.ShouldRateLimit(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		got := res.GetDynamicMetadata().AsMap()
		if res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT ||
			!reflect.DeepEqual(got["metadata"], map[string]any{"team": "billing", "first": "tenant", "tags": map[string]any{"owner": "b"}}) ||
			!reflect.DeepEqual(got[rls.RefusedKey], []any{ip}) || got["domain"] != "edge" {
			t.Fatalf("refused: %v, dynamic_metadata %#v, want OVER_LIMIT, the tenant's metadata alone and %s refusing", res.OverallCode, got, ip)
		}

		plain := serve(t, b, metaConfig, rls.Options{})
		if res := ask(t, plain, desc("tenant", "t")); res.GetDynamicMetadata() != nil {
			t.Errorf("without the option: dynamic_metadata %v, want none", res.GetDynamicMetadata())
		}
	})
}
