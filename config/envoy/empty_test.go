package envoy_test

import (
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// TestEmptyValuesReadAsTheReference: value:, name: and replaces: with
// nothing after them (or an empty string) load as the reference reads
// them: an empty value is the key alone, an empty name no name, an empty
// replaces none; and an empty value is still the same descriptor as the
// key alone, a duplicate reported where the second one is.
func TestEmptyValuesReadAsTheReference(t *testing.T) {
	c, err := envoy.Parse("e.yaml", []byte(`domain: e
descriptors:
  - key: user
    value:
    rate_limit: {unit: minute, requests_per_unit: 5, name: , replaces: }
  - key: tenant
    value: ""
    rate_limit: {unit: hour, requests_per_unit: 7, name: ""}
  - key: path
    value:
    descriptors:
      - key: method
        value: ~
        rate_limit: {unit: second, requests_per_unit: 3, name: null, replaces: []}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kv      []string
		perUnit int
		unit    string
	}{
		{[]string{"user", "alice"}, 5, "minute"},
		{[]string{"user", ""}, 5, "minute"},
		{[]string{"tenant", "acme"}, 7, "hour"},
		{[]string{"path", "/a", "method", "GET"}, 3, "second"},
	} {
		l, _ := c.Match(entries(tc.kv...))
		if l == nil {
			t.Errorf("%v: no limit, want %d a %s", tc.kv, tc.perUnit, tc.unit)
			continue
		}
		if l.PerUnit != tc.perUnit || l.Unit != tc.unit || l.Name != "" || len(l.Replaces) != 0 {
			t.Errorf("%v: %d a %s, name %q, replaces %q; want %d a %s, no name, no replaces", tc.kv, l.PerUnit, l.Unit, l.Name, l.Replaces, tc.perUnit, tc.unit)
		}
	}
	for _, tc := range []struct{ name, src, want string }{
		{"null value then key alone", "domain: d\ndescriptors:\n  - key: a\n    value:\n  - key: a\n", "d.yaml:5:5: descriptors[1]: found a second descriptor with key \"a\" and value \"\" at this level"},
		{"key alone then empty value", "domain: d\ndescriptors:\n  - key: a\n  - key: a\n    value: \"\"\n", "d.yaml:5:12: descriptors[1]: found a second descriptor with key \"a\" and value \"\" at this level"},
		{"null replaces name", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, replaces: [{name: }]}\n", "d.yaml:4:72: descriptors[0].rate_limit.replaces[0].name: found nothing; required: the name of the limit replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := envoy.Parse("d.yaml", []byte(tc.src))
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want+";") {
				t.Errorf("error %v, want one problem %q", err, tc.want)
			}
		})
	}
}
