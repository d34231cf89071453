package envoy_test

import (
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// TestUnlimitedWithAnInvalidUnit: beside unlimited: true, a unit that is
// none of the units (nothing, "", UNKNOWN, any other word) is ignored, as
// the reference ignores it: the descriptor is unlimited. A valid unit
// there stays a problem, as in the reference (see TestParseProblems).
func TestUnlimitedWithAnInvalidUnit(t *testing.T) {
	c, err := envoy.Parse("u.yaml", []byte(`domain: u
descriptors:
  - key: a
    rate_limit: {unlimited: true, unit: }
  - key: b
    rate_limit: {unit: "", unlimited: true}
  - key: c
    rate_limit: {unlimited: true, unit: UNKNOWN}
  - key: d
    rate_limit: {unit: fortnight, unlimited: true, name: d}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b", "c", "d"} {
		if l, _ := c.Match(entries(key, "v")); l == nil || !l.Unlimited || l.Unit != "" {
			t.Errorf("%s: matched %+v, want an unlimited limit with no unit", key, l)
		}
	}
	if _, err := envoy.Parse("u.yaml", []byte("domain: u\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n")); err == nil {
		t.Error("an invalid unit without unlimited: no problem")
	}
}
