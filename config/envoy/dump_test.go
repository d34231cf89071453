package envoy_test

import (
	"strings"
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

// TestQuotaModeKeys: quota_mode is printed as given and makes a shadow
// rule; value_to_metric is read and changes nothing; a lease does not go
// with quota_mode.
func TestQuotaModeKeys(t *testing.T) {
	c, err := envoy.Parse("q.yaml", []byte(`domain: q
descriptors:
  - key: tenant
    quota_mode: true
    value_to_metric: true
    rate_limit: {unit: hour, requests_per_unit: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := envoy.Dump(c), "q.tenant: unit=HOUR requests_per_unit=2, shadow_mode: false, quota_mode: true\n"; got != want {
		t.Errorf("Dump %q, want %q", got, want)
	}
	if rules := envoy.Limits(c); !rules[0].Shadow {
		t.Errorf("a quota_mode limit's rule is not a shadow rule: %+v", rules[0])
	}
	l, _ := c.Match(entries("tenant", "t"))
	if l == nil || !l.Quota || l.Shadow {
		t.Errorf("matched %+v, want Quota and not Shadow", l)
	}
	_, err = envoy.Parse("q.yaml", []byte("domain: q\ndescriptors:\n  - key: t\n    quota_mode: true\n    rate_limit: {unit: hour, requests_per_unit: 2, lease: 1s}\n"))
	if err == nil || !strings.Contains(err.Error(), "no lease on a quota_mode descriptor") {
		t.Errorf("a lease with quota_mode: %v", err)
	}
	_, err = envoy.Parse("q.yaml", []byte("domain: q\ndescriptors:\n  - key: t\n    quota_mode: often\n"))
	if err == nil || !strings.Contains(err.Error(), "q.yaml:4:17: descriptors[0].quota_mode: found \"often\"; allowed: true or false") {
		t.Errorf("quota_mode not a boolean: %v", err)
	}
}

// TestDumpSaysTheWindow: a limit over more than one unit (unit_multiplier,
// or a window) says how many units, so that its line does not read as
// requests_per_unit per one unit; a limit of one unit reads as the
// reference's.
func TestDumpSaysTheWindow(t *testing.T) {
	c, err := envoy.Parse("w.yaml", []byte(`domain: w
descriptors:
  - key: a
    rate_limit: {unit: minute, unit_multiplier: 5, requests_per_unit: 10}
  - key: b
    rate_limit: {window: 90s, requests_per_unit: 10}
  - key: c
    rate_limit: {unit: hour, unit_multiplier: 1, requests_per_unit: 10}
  - key: d
    rate_limit: {window: 2h, requests_per_unit: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := `w.a: unit=MINUTE requests_per_unit=10 unit_multiplier=5, shadow_mode: false, quota_mode: false
w.b: unit=SECOND requests_per_unit=10 unit_multiplier=90, shadow_mode: false, quota_mode: false
w.c: unit=HOUR requests_per_unit=10, shadow_mode: false, quota_mode: false
w.d: unit=HOUR requests_per_unit=10 unit_multiplier=2, shadow_mode: false, quota_mode: false
`
	if got := envoy.Dump(c); got != want {
		t.Fatalf("Dump:\n%s\nwant:\n%s", got, want)
	}
}
