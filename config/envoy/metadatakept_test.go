package envoy_test

import (
	"reflect"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// TestMetadataIsKept: a descriptor's metadata is its limit's
// (Limit.Metadata), with JSON's values: numbers, text, booleans, null,
// lists, mappings keyed by text (another key, a timestamp and an alias
// read as text and as what they stand for). A limit without it has none,
// and metadata on a descriptor without a rate_limit belongs to no limit.
func TestMetadataIsKept(t *testing.T) {
	c, err := envoy.Parse("m.yaml", []byte(`domain: m
descriptors:
  - key: key1
    metadata: {lost: true}
    descriptors:
      - key: subkey1
        rate_limit: {unit: second, requests_per_unit: 5}
        metadata:
          name: &n service_1
          again: *n
          tags: [a, 1, 2.5, true, {deep: ~}]
          1: one
          when: 2026-11-28T10:00:00Z
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
`))
	if err != nil {
		t.Fatal(err)
	}
	l, _ := c.Match(entries("key1", "x", "subkey1", "y"))
	want := map[string]any{
		"name": "service_1", "again": "service_1",
		"tags": []any{"a", 1, 2.5, true, map[string]any{"deep": nil}},
		"1":    "one", "when": "2026-11-28T10:00:00Z",
	}
	if l == nil || !reflect.DeepEqual(l.Metadata, want) {
		t.Errorf("key1/subkey1: metadata %#v, want %#v", l.Metadata, want)
	}
	if l, _ := c.Match(entries("key2", "z")); l == nil || l.Metadata != nil {
		t.Errorf("key2: %+v, want a limit without metadata", l)
	}
}
