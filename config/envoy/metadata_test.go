package envoy_test

import (
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// TestMetadataIsAccepted: a descriptor's metadata (any mapping, or
// nothing), which the reference returns in its dynamic metadata under
// RESPONSE_DYNAMIC_METADATA, loads and changes nothing of the limits;
// metadata that is not a mapping is a problem, as the reference refuses
// it.
func TestMetadataIsAccepted(t *testing.T) {
	c, err := envoy.Parse("m.yaml", []byte(`domain: m
descriptors:
  - key: key1
    value: value1
    descriptors:
      - key: subkey1
        rate_limit: {unit: second, requests_per_unit: 5}
        metadata:
          name: service_1
          tags: [a, 1, true, {deep: ~}]
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
    metadata:
      service_with_quota: {name: service_2}
  - key: key3
    metadata:
    rate_limit: {unit: hour, requests_per_unit: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kv      []string
		perUnit int
	}{
		{[]string{"key1", "value1", "subkey1", "x"}, 5},
		{[]string{"key2", "y"}, 20},
		{[]string{"key3", "z"}, 3},
	} {
		if l, _ := c.Match(entries(tc.kv...)); l == nil || l.PerUnit != tc.perUnit {
			t.Errorf("%v: matched %+v, want %d a unit", tc.kv, l, tc.perUnit)
		}
	}
	for _, src := range []string{"metadata: service_1", "metadata: [a, b]"} {
		_, err := envoy.Parse("m.yaml", []byte("domain: m\ndescriptors:\n  - key: a\n    "+src+"\n"))
		if want := "m.yaml:4:15: descriptors[0].metadata: found "; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "allowed: a mapping") {
			t.Errorf("%s: error %v, want %q... allowed: a mapping", src, err, want)
		}
	}
}
