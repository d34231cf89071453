package envoy_test

import (
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// TestMergeKeys: YAML's merge key (<<: *anchor, or a list of anchors)
// loads as the reference's YAML reads it: the merged mapping's keys are
// the mapping's, a key later in the mapping winning over an earlier one,
// and of a list of merged mappings the first's winning.
func TestMergeKeys(t *testing.T) {
	c, err := envoy.Parse("k.yaml", []byte(`domain: k
descriptors:
  - key: a
    rate_limit: &base {unit: second, requests_per_unit: 1}
  - key: b
    rate_limit:
      <<: *base
      requests_per_unit: 5
  - key: c
    rate_limit: {requests_per_unit: 5, <<: *base}
  - key: d
    rate_limit: &min {unit: minute, requests_per_unit: 2}
  - key: e
    rate_limit:
      <<: [*min, *base]
      name: e
  - key: f
    <<: {rate_limit: {unit: hour, requests_per_unit: 9}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, unit string
		perUnit   int
	}{
		{"a", "second", 1},
		{"b", "second", 5},
		{"c", "second", 1},
		{"d", "minute", 2},
		{"e", "minute", 2},
		{"f", "hour", 9},
	} {
		if l, _ := c.Match(entries(tc.key, "v")); l == nil || l.Unit != tc.unit || l.PerUnit != tc.perUnit {
			t.Errorf("%s: matched %+v, want %d a %s", tc.key, l, tc.perUnit, tc.unit)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"domain: k\ndescriptors:\n  - key: a\n    rate_limit: {<<: 3}\n", "k.yaml:4:22: descriptors[0].rate_limit.<<: found \"3\"; allowed: a mapping or a list of mappings to merge"},
		{"domain: k\ndescriptors:\n  - key: a\n    rate_limit: {<<: {unt: second}, requests_per_unit: 1}\n", "k.yaml:4:23: descriptors[0].rate_limit.unt: found an unknown key"},
		{"domain: k\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, unit: minute}\n", "k.yaml:4:54: descriptors[0].rate_limit.unit: found the key a second time"},
	} {
		if _, err := envoy.Parse("k.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want a problem %q", err, tc.want)
		}
	}
}
