package envoy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// entries is a descriptor's keys and values, in order, as Match takes
// them: their number and the i-th.
func entries(kv ...string) (int, func(int) (string, string)) {
	return len(kv) / 2, func(i int) (string, string) { return kv[2*i], kv[2*i+1] }
}

// TestMatch: at each level an entry of the same key and value wins, then
// the first prefix the value has, then the key with no value; the limit
// is that of the entry the last entry reaches.
func TestMatch(t *testing.T) {
	c, err := envoy.Parse("m.yaml", []byte(`domain: m
descriptors:
  - key: path
    value: /api/v1
    rate_limit: {unit: second, requests_per_unit: 1, name: exact}
  - key: path
    value: /api/*
    rate_limit: {unit: second, requests_per_unit: 2, name: prefix}
  - key: path
    rate_limit: {unit: second, requests_per_unit: 3, name: any, replaces: [{name: exact}]}
    descriptors:
      - key: user
        rate_limit: {unlimited: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		entries []string
		want    string // the limit's name; "-" for none, "unlimited"
	}{
		{[]string{"path", "/api/v1"}, "exact"},
		{[]string{"path", "/api/v2"}, "prefix"},
		{[]string{"path", "/other"}, "any"},
		{[]string{"path", "/other", "user", "u"}, "unlimited"},
		{[]string{"path", "/api/v1", "user", "u"}, "-"},
		{[]string{"user", "u"}, "-"},
		{nil, "-"},
	} {
		l, _ := c.Match(entries(tc.entries...))
		got := "-"
		switch {
		case l != nil && l.Unlimited:
			got = "unlimited"
		case l != nil:
			got = l.Name
		}
		if got != tc.want {
			t.Errorf("%v: matched %s, want %s", tc.entries, got, tc.want)
		}
	}
	any, _ := c.Match(entries("path", "/x"))
	if any.Unit != "second" || any.PerUnit != 3 || any.AlgorithmName != "fixed_window" || any.Algorithm != (algorithms.FixedWindow{Limit: 3, Window: time.Second}) || len(any.Replaces) != 1 || any.Replaces[0] != "exact" {
		t.Errorf("the any-value limit as matched: %+v", any)
	}
	o, err := any.Overridden(5, "MINUTE", 2)
	if err != nil || o.Window != 2*time.Minute || o.PerUnit != 5 || o.Multiplier != 2 || o.Rule != any.Rule || o.Algorithm != (algorithms.FixedWindow{Limit: 5, Window: 2 * time.Minute}) {
		t.Errorf("overridden: %+v, %v", o, err)
	}
	if _, err := any.Overridden(5, "unknown", 0); err == nil || !strings.Contains(err.Error(), "unit UNKNOWN") {
		t.Errorf("an unknown unit: %v", err)
	}
	rules := map[string]bool{}
	for _, r := range envoy.Limits(c) {
		rules[r.Name] = true
	}
	if ov := c.Override(); !rules[ov.Rule] || !strings.HasSuffix(ov.Rule, ".m.override") || ov.Name != "" {
		t.Errorf("the override limit %+v is not one of Limits' rules %v", ov, rules)
	}
}

// TestShareThreshold: an entry that reaches a prefix with share_threshold
// is reported shared, at its position, on the way to the limit matched,
// at any depth and whether or not the prefix has a limit of its own (the
// reference's test configuration); an exact value wins over such a
// prefix and is not shared.
func TestShareThreshold(t *testing.T) {
	c, err := envoy.Parse("s.yaml", []byte(`domain: s
descriptors:
  - key: files
    value: files/*
    share_threshold: true
    rate_limit: {unit: minute, requests_per_unit: 100}
  - key: nested
    value: parent
    descriptors:
      - key: files
        value: nested/*
        share_threshold: true
        rate_limit: {unit: minute, requests_per_unit: 200}
  - key: files
    value: top/*
    share_threshold: true
    descriptors:
      - key: files
        value: nested/*
        share_threshold: true
        rate_limit: {unit: minute, requests_per_unit: 300}
  - key: path
    value: path/*
    share_threshold: true
    descriptors:
      - key: file
        value: file/*
        share_threshold: false
        descriptors:
          - key: type
            rate_limit: {unit: minute, requests_per_unit: 120}
  - key: file
    value: test1
    rate_limit: {unit: minute, requests_per_unit: 50}
  - key: file
    value: test*
    share_threshold: true
    rate_limit: {unit: minute, requests_per_unit: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		entries []string
		perUnit int
		shared  uint64
	}{
		{[]string{"files", "files/a.pdf"}, 100, 0b1},
		{[]string{"files", "files/b.csv"}, 100, 0b1},
		{[]string{"nested", "parent", "files", "nested/1.txt"}, 200, 0b10},
		{[]string{"files", "top/1.txt", "files", "nested/1.txt"}, 300, 0b11},
		{[]string{"path", "path/foo", "file", "file/doc1", "type", "pdf"}, 120, 0b001},
		{[]string{"file", "test1"}, 50, 0},
		{[]string{"file", "test2"}, 100, 0b1},
	} {
		l, shared := c.Match(entries(tc.entries...))
		if l == nil || l.PerUnit != tc.perUnit || shared != tc.shared {
			t.Errorf("%v: matched %+v, shared %b; want requests_per_unit %d, shared %b", tc.entries, l, shared, tc.perUnit, tc.shared)
		}
	}
	if l, shared := c.Match(entries("files", "other/x")); l != nil || shared != 0 {
		t.Errorf("no match: %+v, shared %b", l, shared)
	}
}

// TestEmptyDescriptors: "descriptors:" with nothing after it (a null, as
// a template that rendered an empty list writes it) is no descriptors, as
// the reference reads it, at the top and nested: the file loads, and the
// descriptor above it keeps its limit.
func TestEmptyDescriptors(t *testing.T) {
	for _, src := range []string{"domain: m\ndescriptors:\n", "domain: m\ndescriptors: ~\n", "domain: m\ndescriptors: null\n"} {
		if _, err := envoy.Parse("m.yaml", []byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	c, err := envoy.Parse("m.yaml", []byte(`domain: m
descriptors:
  - key: tenant
    rate_limit: {unit: second, requests_per_unit: 1, name: tenant}
    descriptors:
`))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := c.Match(entries("tenant", "a")); l == nil || l.Name != "tenant" {
		t.Errorf("tenant: %+v, want the limit named tenant", l)
	}
	if l, _ := c.Match(entries("tenant", "a", "path", "/")); l != nil {
		t.Errorf("tenant and path: %+v, want none", l)
	}
}

// TestWildcardAnywhere: a * anywhere in a value stands for any run of
// characters, empty too, as the reference matches it (its wildcard test
// configuration): "bar*b", "foo*bar*baz"; exact values first, then the
// wildcards in file order, then the key alone. share_threshold takes
// such a value too. Dump and the rule names write the value as given.
func TestWildcardAnywhere(t *testing.T) {
	c, err := envoy.Parse("w.yaml", []byte(`domain: w
descriptors:
  - key: midWild
    value: bar*b
    rate_limit: {unit: minute, requests_per_unit: 20, name: mid}
  - key: multiWild
    value: foo*bar*baz
    rate_limit: {unit: minute, requests_per_unit: 10, name: multi}
  - key: multiWild
    value: foo*
    rate_limit: {unit: minute, requests_per_unit: 30, name: trailing}
  - key: multiWild
    value: foo-bar-baz
    rate_limit: {unit: minute, requests_per_unit: 40, name: exact}
  - key: multiWild
    rate_limit: {unit: minute, requests_per_unit: 50, name: any}
  - key: path
    value: /api/*/users
    share_threshold: true
    rate_limit: {unit: minute, requests_per_unit: 60, name: shared}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, value, want string // want: the limit's name; "-" for none
		shared           uint64
	}{
		{"midWild", "barb", "mid", 0},
		{"midWild", "bar-anything-b", "mid", 0},
		{"midWild", "bar", "-", 0},
		{"midWild", "barbx", "-", 0},
		{"multiWild", "foobarbaz", "multi", 0},
		{"multiWild", "foo1bar2baz", "multi", 0},
		{"multiWild", "foo-bar-baz", "exact", 0},
		{"multiWild", "foobazbar", "trailing", 0},
		{"multiWild", "xfoobarbaz", "any", 0},
		{"path", "/api/v1/users", "shared", 1},
		{"path", "/api/v2/users", "shared", 1},
		{"path", "/api/v1/groups", "-", 0},
	} {
		l, shared := c.Match(entries(tc.key, tc.value))
		got := "-"
		if l != nil {
			got = l.Name
		}
		if got != tc.want || shared != tc.shared {
			t.Errorf("%s=%s: matched %s, shared %b; want %s, shared %b", tc.key, tc.value, got, shared, tc.want, tc.shared)
		}
	}
	dump := envoy.Dump(c)
	for _, line := range []string{"w.midWild_bar*b: unit=MINUTE", "w.multiWild_foo*bar*baz: unit=MINUTE", "w.multiWild_foo*: unit=MINUTE", "w.path_/api/*/users: unit=MINUTE"} {
		if !strings.Contains(dump, line) {
			t.Errorf("Dump has no line %q:\n%s", line, dump)
		}
	}
	names := map[string]bool{}
	for _, r := range envoy.Limits(c) {
		if names[r.Name] {
			t.Errorf("rule name %q given twice", r.Name)
		}
		names[r.Name] = true
	}
	if _, err := envoy.Parse("w.yaml", []byte("domain: w\ndescriptors:\n  - key: k\n    value: a*b\n  - key: k\n    value: a*b\n")); err == nil {
		t.Error("one wildcard twice at a level: no problem")
	}
}
