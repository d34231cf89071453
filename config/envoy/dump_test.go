package envoy_test

import (
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

func TestDumpAsTheReference(t *testing.T) {
	c, err := envoy.Parse("edge.yaml", []byte(`domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 50}
  - key: tenant
    value: acme
    descriptors:
      - key: path
        value: /api/*
        shadow_mode: true
        rate_limit: {unit: minute, requests_per_unit: 600, name: api}
      - key: path
        value: /health
        rate_limit: {unlimited: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := `edge.remote_address: unit=SECOND requests_per_unit=50, shadow_mode: false, quota_mode: false
edge.tenant_acme.path_/api/*: unit=MINUTE requests_per_unit=600, shadow_mode: true, quota_mode: false
edge.tenant_acme.path_/health: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false
`
	if got := envoy.Dump(c); got != want {
		t.Fatalf("Dump:\n%s\nwant:\n%s", got, want)
	}
}
