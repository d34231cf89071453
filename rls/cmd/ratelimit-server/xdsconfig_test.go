package main

import (
	"errors"
	"strings"
	"testing"

	rlsconfv3 "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// anys packs messages as an xDS response's resources.
func anys(t *testing.T, msgs ...proto.Message) []*anypb.Any {
	t.Helper()
	out := make([]*anypb.Any, len(msgs))
	for i, m := range msgs {
		a, err := anypb.New(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = a
	}
	return out
}

// TestXDSConfigsAsFiles checks that resources are the configuration the
// runtime directory's files of the same limits are.
func TestXDSConfigsAsFiles(t *testing.T) {
	edge := &rlsconfv3.RateLimitConfig{Name: "edge-limits", Domain: "edge", Descriptors: []*rlsconfv3.RateLimitDescriptor{
		{Key: "remote_address", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_SECOND, RequestsPerUnit: 10}},
		{Key: "path", Value: "/api/*", ShadowMode: true, DetailedMetric: true,
			RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_MINUTE, RequestsPerUnit: 600, Name: "api"}},
		{Key: "tenant", Value: "acme", Descriptors: []*rlsconfv3.RateLimitDescriptor{
			{Key: "user", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_HOUR, RequestsPerUnit: 100}},
			{Key: "user", Value: "root", RateLimit: &rlsconfv3.RateLimitPolicy{Unlimited: true}},
		}},
	}}
	other := &rlsconfv3.RateLimitConfig{Name: "a", Domain: "api", Descriptors: []*rlsconfv3.RateLimitDescriptor{
		{Key: "user", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_DAY, RequestsPerUnit: 1000}},
	}}
	got, err := xdsConfigs(anys(t, edge, other))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"edge.yaml": `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 10}
  - key: path
    value: /api/*
    shadow_mode: true
    detailed_metric: true
    rate_limit: {unit: minute, requests_per_unit: 600, name: api}
  - key: tenant
    value: acme
    descriptors:
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 100}
      - key: user
        value: root
        rate_limit: {unlimited: true}
`,
		"api.yaml": "domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: 1000}\n",
	}
	var want []*rls.Config
	for _, name := range []string{"api.yaml", "edge.yaml"} { // sorted by domain, as LoadDir does
		c, err := rls.Parse(name, []byte(files[name]))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, c)
	}
	if g, w := rls.Dump(got...), rls.Dump(want...); g != w {
		t.Fatalf("from xDS:\n%s\nfrom files:\n%s", g, w)
	}
	// Four limits, and each of the two domains' rule for overrides of
	// descriptors no limit matches.
	if gr, wr := rls.Limits(got...), rls.Limits(want...); len(gr) != len(wr) || len(gr) != 4+2 {
		t.Fatalf("rules: %d from xDS, %d from files, want 6", len(gr), len(wr))
	} else {
		for i := range gr {
			if gr[i] != wr[i] {
				t.Errorf("rule %d: %+v from xDS, %+v from files", i, gr[i], wr[i])
			}
		}
	}
}

func TestXDSConfigsRejected(t *testing.T) {
	replaces := &rlsconfv3.RateLimitConfig{Name: "r", Domain: "edge", Descriptors: []*rlsconfv3.RateLimitDescriptor{
		{Key: "k", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_SECOND, RequestsPerUnit: 1,
			Replaces: []*rlsconfv3.RateLimitReplace{{Name: "other"}}}},
	}}
	noDomain := &rlsconfv3.RateLimitConfig{Name: "nd"}
	badUnit := &rlsconfv3.RateLimitConfig{Name: "bu", Domain: "x", Descriptors: []*rlsconfv3.RateLimitDescriptor{
		{Key: "k", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit(42), RequestsPerUnit: 1}},
	}}
	for _, tc := range []struct {
		name string
		res  []*anypb.Any
		want []string
	}{
		{"replaces", anys(t, replaces), []string{"xds:r:", "descriptors[0].rate_limit.replaces"}},
		{"no domain", anys(t, noDomain), []string{"xds:nd:", "domain"}},
		{"unknown unit", anys(t, badUnit), []string{"xds:bu:", `found "42"`}},
		{"another type", anys(t, durationpb.New(0)), []string{"resource 0", "google.protobuf.Duration"}},
		{"every problem", anys(t, replaces, noDomain), []string{"xds:r:", "xds:nd:"}},
	} {
		configs, err := xdsConfigs(tc.res)
		if err == nil || configs != nil || !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("%s: %v, %v; want an ErrConfig", tc.name, configs, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", tc.name, err, w)
			}
		}
	}
}

// TestXDSConfigsEmpty checks that a version without resources is an
// empty configuration, on which every call is answered OK, as the
// reference serves with no domain configured.
func TestXDSConfigsEmpty(t *testing.T) {
	configs, err := xdsConfigs(nil)
	if err != nil || len(configs) != 0 {
		t.Fatalf("%v, %v; want no configs and no error", configs, err)
	}
	svc, err := newService(testStore(t), rls.Options{}, "", func() ([]*rls.Config, error) { return configs, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.close() })
	if got := remaining(t, rlsClient(t, svc), "ann"); got != 0 {
		t.Fatalf("limit_remaining %d on no configuration, want 0 (no limit)", got)
	}
}
