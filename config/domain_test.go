package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
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
			_, err := read("f.yaml", []byte(data), funcs)
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
	f, err := read("f.yaml", []byte(validEnvoy), funcs)
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
	schema, err := jsonschema.NewCompiler().Compile("schema.json")
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
		_, err := read("f.json", []byte(data), funcs)
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

// TestEnvoyDescriptor: a descriptor matches the rule of its domain's stack
// whose key reads exactly its entries' keys, in order, each part of the
// key reading the entry at its place; its identity is the values' (an
// address masked as the ip identity masks it) and its plan the one its
// value chooses.
func TestEnvoyDescriptor(t *testing.T) {
	// The rule pair reads one key twice.
	src := strings.Replace(validEnvoy, "    rules: [per-ip, per-path]\n", "    rules: [per-ip, per-path, pair]\n", 1)
	src = strings.Replace(src, "stacks:\n", "  - name: pair\n    key: {join: [{descriptor: k}, {descriptor: k}]}\n    gcra: 1/s\nstacks:\n", 1)
	path := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, memstore.Must())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e := l.Envoy()
	if e.Limiter() == nil || len(e.Limiter().Rules()) != 3 {
		t.Fatalf("the limiter: %v, want the three rules", e.Limiter())
	}
	match := func(domain string, kv ...string) (limiter.Check, limiter.Rule, error) {
		var keys, values []string
		for i := 0; i+1 < len(kv); i += 2 {
			keys, values = append(keys, kv[i]), append(values, kv[i+1])
		}
		return e.Descriptor(domain, keys, values)
	}
	c, r, err := match("edge", "path", "/a")
	if err != nil || c.Rule != "per-path" || r.Name != "per-path" || c.Identity != keyfunc.Hash("/a") || c.Plan != nil {
		t.Errorf("path /a: %+v, %v, %v; want per-path by the value's hash, no plan", c, r.Name, err)
	}
	if c, _, _ := match("edge", "path", "/health"); c.Plan != (algorithms.FixedWindow{Limit: 100, Window: time.Minute}) {
		t.Errorf("path /health: plan %v, want the value's", c.Plan)
	}
	for _, kv := range [][]string{{"edge", "path", "/a", "tenant", "t"}, {"edge", "other", "x"}, {"other", "path", "/a"}, {"edge"}} {
		if c, _, err := match(kv[0], kv[1:]...); c.Rule != "" || err != nil {
			t.Errorf("%v: matched %q (%v), want nothing", kv, c.Rule, err)
		}
	}
	a, _, _ := match("edge", "remote_address", "2001:db8::1")
	b, _, _ := match("edge", "remote_address", "2001:db8::2")
	if a.Rule != "per-ip" || a.Identity != b.Identity {
		t.Errorf("two addresses of one /64: %+v, %+v; want per-ip, one identity", a, b)
	}
	if _, _, err := match("edge", "remote_address", "not-an-address"); !errors.Is(err, ratelimit.ErrNoKey) || strings.Contains(err.Error(), "not-an-address") {
		t.Errorf("a remote_address that is not an address: %v; want ErrNoKey naming no value", err)
	}
	xy, _, _ := match("edge", "k", "x", "k", "y")
	xx, _, _ := match("edge", "k", "x", "k", "x")
	if xy.Rule != "pair" || xy.Identity == xx.Identity {
		t.Errorf("one key twice: %+v and %+v; want pair, each entry read at its place", xy, xx)
	}
}
