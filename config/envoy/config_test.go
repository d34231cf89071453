package envoy_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

const example = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 3}
  - key: path
    value: /api/*
    shadow_mode: true
    rate_limit: {unit: Minute, requests_per_unit: 600, name: api}
  - key: tenant
    descriptors:
      - key: plan
        value: free
        rate_limit: {unit: hour, requests_per_unit: 100}
      - key: plan
        value: gold
        rate_limit: {unlimited: true}
`

// configured is rules without each domain's override rule (see
// TestParseRules).
func configured(rules []limiter.Rule) []limiter.Rule {
	return slices.DeleteFunc(rules, func(r limiter.Rule) bool {
		return strings.HasPrefix(r.Name, "_") && strings.HasSuffix(r.Name, ".override")
	})
}

func TestParseRules(t *testing.T) {
	c, err := envoy.Parse("edge.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if c.Domain != "edge" {
		t.Errorf("domain %q", c.Domain)
	}
	all := envoy.Limits(c)
	override := all[len(all)-1]
	if want := (limiter.Rule{Name: "_8bc7330734ce0b358817d7b5a4dbc004.edge.override", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}}); override != want {
		t.Errorf("the domain's override rule, last, is %+v, want %+v (named from the domain alone)", override, want)
	}
	got := map[string]limiter.Rule{}
	for _, r := range configured(all) {
		got[r.Name] = r
	}
	if len(got) != 3 {
		t.Fatalf("rules %v, want 3 (the unlimited one has none)", got)
	}
	want := limiter.Rule{Name: "edge.remote_address", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Second}}
	if got[want.Name] != want {
		t.Errorf("rule %q = %+v, want %+v", want.Name, got[want.Name], want)
	}
	want = limiter.Rule{Name: "edge.tenant.plan_free", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}
	if got[want.Name] != want {
		t.Errorf("rule %q = %+v, want %+v", want.Name, got[want.Name], want)
	}
	var wildcard limiter.Rule
	for name, r := range got {
		if strings.HasPrefix(name, "_") {
			wildcard = r
		}
	}
	if !wildcard.Shadow || wildcard.Algorithm != (algorithms.FixedWindow{Limit: 600, Window: time.Minute}) {
		t.Errorf("wildcard rule %+v, want a shadow FixedWindow(600 per 1m) under a hashed name", wildcard)
	}
	mem, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := limiter.New(mem, envoy.Limits(c)); err != nil {
		t.Errorf("the rules are not valid limiter rules: %v", err)
	}
}

func TestRuleNamesStableAndBounded(t *testing.T) {
	long := strings.Repeat("k", 80)
	src := "domain: d\ndescriptors:\n  - key: " + long + "\n    value: a|b\n    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: x.y\n    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: x\n    value: y\n    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: x\n    descriptors:\n      - key: y\n        rate_limit: {unit: second, requests_per_unit: 1}\n"
	names := func() []string {
		c, err := envoy.Parse("d.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range configured(envoy.Limits(c)) {
			out = append(out, r.Name)
		}
		return out
	}
	first, again := names(), names()
	if strings.Join(first, " ") != strings.Join(again, " ") {
		t.Errorf("names changed between parses: %v, %v", first, again)
	}
	seen := map[string]bool{}
	for _, n := range first {
		if len(n) > 64 || seen[n] {
			t.Errorf("name %q is too long or repeated (all: %v)", n, first)
		}
		seen[n] = true
	}
	if len(seen) != 4 {
		t.Errorf("names %v: want 4 distinct (key x.y and key y under key x must not meet)", first)
	}
}

// An invalid requests_per_unit is one problem: it is not also taken for
// a 0 (refuse every request) on an algorithm that cannot be 0.
func TestInvalidPerUnitIsOneProblem(t *testing.T) {
	_, err := envoy.Parse("f.yaml", []byte("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: -1, algorithm: gcra}\n"))
	if err == nil || strings.Contains(err.Error(), "refuse every request") {
		t.Errorf("error %v, want only the invalid number", err)
	}
}

func TestParseProblems(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown key", "domain: d\ndescriptors:\n  - key: a\n    rate_limt: {unit: second}\n", "f.yaml:4:5: descriptors[0].rate_limt: found an unknown key"},
		{"bad unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n", "f.yaml:5:13: descriptors[0].rate_limit.unit: found \"fortnight\""},
		{"no domain", "descriptors: []\n", "f.yaml:1:1: domain: found nothing; required: domain"},
		{"unlimited with unit", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true, unit: second}\n", "f.yaml:4:41: descriptors[0].rate_limit.unit: found a unit with unlimited: true"},
		{"negative", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: -1}\n", "f.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: found \"-1\"; allowed: a whole number from 0 to 4294967295"},
		{"zero on gcra", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 0, algorithm: gcra}\n", "f.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: found 0 (refuse every request) on gcra; allowed: 0 only with fixed_window"},
		{"zero leased", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 0, lease: 1s}\n", "f.yaml:4:61: descriptors[0].rate_limit.lease: found a lease with requests_per_unit 0 (refuse every request); allowed: none"},
		{"duplicate", "domain: d\ndescriptors:\n  - key: a\n    value: v\n  - key: a\n    value: v\n", "f.yaml:6:12: descriptors[1]: found a second descriptor with key \"a\""},
		{"nested", "domain: d\ndescriptors:\n  - key: a\n    descriptors:\n      - value: v\n", "f.yaml:5:9: descriptors[0].descriptors[0].key: found nothing; required: key"},
		{"syntax", "domain: [\n", "f.yaml:1:1: (syntax): "},
		{"replaces without a name", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      replaces: [{name: \"\"}]\n", "f.yaml:7:25: descriptors[0].rate_limit.replaces[0].name: found \"\"; required: the name of the limit replaced"},
		{"replaces no key name", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      replaces: [{}]\n", "f.yaml:7:18: descriptors[0].rate_limit.replaces[0].name: found nothing; required: name"},
		{"replaces itself", "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      name: a\n      replaces: [{name: b}, {name: a}]\n", "f.yaml:8:36: descriptors[0].rate_limit.replaces[1].name: found \"a\", this limit's own name"},
		{"share_threshold on a value", "domain: d\ndescriptors:\n  - key: a\n    value: v\n    share_threshold: true\n", "f.yaml:5:22: descriptors[0].share_threshold: found true on value \"v\"; allowed only on a wildcard"},
		{"share_threshold not a boolean", "domain: d\ndescriptors:\n  - key: a\n    value: v*\n    share_threshold: often\n", "f.yaml:5:22: descriptors[0].share_threshold: found \"often\"; allowed: true or false"},
		{"replaces an unknown name", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, name: a}\n  - key: b\n    rate_limit: {unit: second, requests_per_unit: 1, replaces: [{name: c}]}\n", "f.yaml:6:72: descriptors[1].rate_limit.replaces[0].name: found \"c\"; allowed: the name of a limit of domain \"d\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := envoy.Parse("f.yaml", []byte(tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to start %q", err, tc.want)
			}
			var p *config.Problem
			if !errors.As(err, &p) || !errors.Is(err, ratelimit.ErrConfig) {
				t.Errorf("error %v is not a config.Problem wrapping ErrConfig", err)
			}
		})
	}
}

// TestWindowOverflowIsAProblem: a unit_multiplier whose window does not
// fit a duration is a problem at it, not a window wrapped round to
// another length (585 years came out as 21 days, which the limiter takes).
func TestWindowOverflowIsAProblem(t *testing.T) {
	for _, tc := range []struct{ unit, multiplier string }{{"year", "585"}, {"month", "7117"}, {"minute", "4294967295"}} {
		src := "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: " + tc.unit + ", unit_multiplier: " + tc.multiplier + ", requests_per_unit: 10}\n"
		_, err := envoy.Parse("f.yaml", []byte(src))
		want := "descriptors[0].rate_limit.unit_multiplier: found \"" + tc.multiplier + "\""
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("%s %ss: %v, want a problem %q...", tc.multiplier, tc.unit, err, want)
		}
	}
}

// TestManyPrefixesInTime: a domain of many prefix values (value: "v*")
// is parsed in time in proportion to it: each prefix was compared with
// every one before it, so 100,000 of them (a 2.8 MB file) took minutes.
func TestManyPrefixesInTime(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: d\ndescriptors:\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, "  - {key: k, value: \"v%d*\"}\n", i)
	}
	b.WriteString("  - {key: k, value: \"v7*\"}\n")
	done := make(chan error, 1)
	go func() {
		_, err := envoy.Parse("f.yaml", []byte(b.String()))
		done <- err
	}()
	select {
	case err := <-done:
		if want := `f.yaml:100003:21: descriptors[100000]: found a second descriptor with key "k" and value "v7*"`; !strings.HasPrefix(fmt.Sprint(err), want) {
			t.Errorf("Parse: %v, want %s...", err, want)
		}
	case <-time.After(time.Minute): // about 7 s under the race detector; minutes when quadratic
		t.Fatal("Parse did not return within a minute")
	}
}

// TestDeepNestingIsAProblem: descriptors nested deeper than any request
// means are a problem at the first level too deep. Each level's fields
// are named by their whole path, so 4,900 levels (a 67 KB file) took
// 1.9 GB to parse.
func TestDeepNestingIsAProblem(t *testing.T) {
	nested := func(depth int) string {
		return "domain: d\ndescriptors: " + strings.Repeat("[{key: k, descriptors: ", depth) + "[]" + strings.Repeat("}]", depth) + "\n"
	}
	if _, err := envoy.Parse("f.yaml", []byte(nested(64))); err != nil {
		t.Errorf("64 levels: %v", err)
	}
	_, err := envoy.Parse("f.yaml", []byte(nested(65)))
	want := "f.yaml:2:" + strconv.Itoa(len("descriptors: ")+64*len("[{key: k, descriptors: ")+1) + ": descriptors" + strings.Repeat("[0].descriptors", 64) + ": found descriptors nested 65 deep; allowed: at most 64"
	if !errors.Is(err, ratelimit.ErrConfig) || !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Errorf("65 levels: %v, want %s...", err, want)
	}
}
