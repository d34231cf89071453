package parse

import (
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed-bff0c9e1/ratelimit"
)

// validEnvoy is a file with an HTTP stack and an Envoy stack and no
// problem; each case of TestEnvoyStackProblems changes it.
const validEnvoy = `rules:
  - name: per-ip
    key: ip
    sliding_window: 100/1m
  - name: per-path
    key: {descriptor: path}
    fixed_window: 10/1m
    plans:
      descriptor: path
      values:
        /health: {fixed_window: 100/1m}
stacks:
  - name: web
    rules: [per-ip]
  - name: edge
    domain: edge
    rules: [per-ip, per-path]
`

// TestEnvoyStackProblems: what an Envoy stack (one with a domain) cannot
// decide, and a descriptor identity elsewhere, are problems at the value
// at fault.
func TestEnvoyStackProblems(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replace  []string // old, new pairs
		want     string   // the error's beginning
		alsoSays string
	}{
		{"descriptor on an HTTP stack", []string{"    rules: [per-ip]\n", "    rules: [per-ip, per-path]\n"},
			`f.yaml:6:23: rules[1].key.descriptor: found descriptor path (hashed), read on Envoy only, in rule "per-path" of HTTP stack "web"; allowed there: ip, constant, header, route, form, func, or a join of them`, ""},
		{"plan by descriptor on an HTTP stack", []string{"{descriptor: path}", "ip", "    rules: [per-ip]\n", "    rules: [per-path]\n", "[per-ip, per-path]", "[per-path]"},
			`f.yaml:9:19: rules[1].plans.descriptor: found descriptor path (hashed), read on Envoy only, in rule "per-path" of HTTP stack "web"`, ""},
		{"HTTP identity on an Envoy stack", []string{"{descriptor: path}", "{header: X-Path}"},
			`f.yaml:6:19: rules[1].key.header: found header X-Path (hashed), read on HTTP and gRPC only, in rule "per-path" of Envoy stack "edge"; allowed there: descriptor, ip (the remote_address entry), or a join of them`, ""},
		{"match on an Envoy stack", []string{"    domain: edge\n", "    domain: edge\n    match: [\"/x\"]\n"},
			`f.yaml:17:12: stacks[1].match: found match on an Envoy stack (one with a domain); allowed: none (Envoy chooses the stack by the request's domain)`, ""},
		{"fail on an Envoy stack", []string{"    domain: edge\n", "    domain: edge\n    fail: closed\n"},
			`f.yaml:17:11: stacks[1].fail: found fail on an Envoy stack (one with a domain); allowed: none (Envoy's failure_mode_deny decides`, ""},
		{"a domain twice", []string{"    rules: [per-ip]\n", "    rules: [per-ip]\n    domain: edge\n"},
			`f.yaml:17:13: stacks[1].domain: found "edge" again; allowed: a domain no other stack has (first at line 15)`, ""},
		{"an empty domain", []string{"domain: edge", `domain: ""`},
			`f.yaml:16:13: stacks[1].domain: found ""; allowed: an Envoy domain (e.g. edge)`, ""},
		{"two rules of the same descriptor keys", []string{"{descriptor: path}", "ip", "    plans:\n      descriptor: path\n      values:\n        /health: {fixed_window: 100/1m}\n", ""},
			`f.yaml:6:10: rules[1].key: found rule "per-path" reading descriptor keys remote_address, as rule "per-ip" does in Envoy stack "edge"; allowed: one rule per descriptor keys in a stack (a descriptor has one status)`, ""},
		{"alt_key on an Envoy stack", []string{"    key: ip\n", "    key: ip\n    alt_key: ip\n"},
			`f.yaml:4:14: rules[0].alt_key: found an alt_key in rule "per-ip" of Envoy stack "edge"; allowed: none`, ""},
		{"an anchored window", []string{"fixed_window: 10/1m\n", "fixed_window: 10/1m anchored\n"},
			`f.yaml:7:19: rules[1].fixed_window: found FixedWindow(10 per 1m0s, anchored) in rule "per-path" of an Envoy stack: an anchored window`, ""},
		{"a plan's concurrency", []string{"{fixed_window: 100/1m}", "{concurrency: 5 ttl 1s}"},
			`f.yaml:11:18: rules[1].plans.values./health.concurrency: found Concurrency(`, "an RLS call takes a slot and no call gives it back"},
		{"a plan by a key the rule does not read", []string{"      descriptor: path\n", "      descriptor: tier\n"},
			`f.yaml:9:19: rules[1].plans.descriptor: found "tier", a key rule "per-path" does not read (path); allowed: one of its key's descriptor keys`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < len(tc.replace); i += 2 {
				if !strings.Contains(validEnvoy, tc.replace[i]) {
					t.Fatalf("%q is not in the valid file", tc.replace[i])
				}
			}
			data := strings.NewReplacer(tc.replace...).Replace(validEnvoy)
			_, err := Read("f.yaml", []byte(data), funcs)
			if err == nil {
				t.Fatalf("no error for\n%s", data)
			}
			if !errors.Is(err, ratelimit.ErrConfig) {
				t.Errorf("%v does not wrap ErrConfig", err)
			}
			if got := err.Error(); !strings.HasPrefix(got, tc.want) || !strings.Contains(got, tc.alsoSays) {
				t.Errorf("got  %s\nwant %s... (saying %q)", got, tc.want, tc.alsoSays)
			}
		})
	}
	f, err := Read("f.yaml", []byte(validEnvoy), funcs)
	if err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	for _, want := range []string{"rule per-path: FixedWindow(10 per 1m0s) by descriptor path (hashed); plans by descriptor path: /health=FixedWindow(100 per 1m0s)\n", "stack edge: per-ip, per-path; Envoy domain edge\n"} {
		if !strings.Contains(f.String(), want) {
			t.Errorf("Check's text\n%s\nlacks %q", f, want)
		}
	}
}

// TestSchemaEnvoyStacks: schema.json takes an Envoy stack, descriptor
// identities and plans by descriptor as the loader does, and refuses, as
// it does, a domain beside match, methods, fail or exempt.
func TestSchemaEnvoyStacks(t *testing.T) {
	schema, err := jsonschema.NewCompiler().Compile("../../schema.json")
	if err != nil {
		t.Fatal(err)
	}
	const valid = `{"rules": [{"name": "per-path", "key": {"join": ["ip", {"descriptor": "path"}]}, "gcra": "10/s",
		"plans": {"descriptor": "path", "values": {"/health": {"gcra": "100/s"}}}}],
		"stacks": [{"name": "edge", "domain": "edge", "rules": ["per-path"]}]}`
	for _, tc := range []struct {
		extra string // added to the stack
		ok    bool
	}{
		{"", true},
		{`, "match": ["/x"]`, false},
		{`, "methods": ["/pkg.S/*"]`, false},
		{`, "fail": "closed"`, false},
		{`, "exempt": []`, false},
	} {
		data := strings.Replace(valid, `"rules": ["per-path"]`, `"rules": ["per-path"]`+tc.extra, 1)
		_, err := Read("f.json", []byte(data), funcs)
		if loaded := err == nil; loaded != tc.ok {
			t.Errorf("stack with %q: the loader accepts it: %v, want %v (%v)", tc.extra, loaded, tc.ok, err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if valid := schema.Validate(doc) == nil; valid != tc.ok {
			t.Errorf("stack with %q: the schema accepts it: %v, want %v", tc.extra, valid, tc.ok)
		}
	}
}
