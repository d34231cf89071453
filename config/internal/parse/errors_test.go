package parse

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
)

// funcs are the names of the key functions the program registers.
var funcs = []string{"user", "plan"}

// valid is a file with no problem; each case of TestErrorsNamePositions
// changes one line of it.
const valid = `rules:
  - name: per-ip
    key: ip
    sliding_window: 100/1m
  - name: global
    key: {constant: all}
    gcra: 5000/s burst 10000
stacks:
  - name: api
    rules: [per-ip, global]
    match: ["/api/"]
`

// TestErrorsNamePositions: each kind of problem is reported with the
// file, the line and column of the value at fault, the field, what was
// found and what is allowed.
func TestErrorsNamePositions(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           string // the error's beginning
		alsoSays       string
	}{
		{"unknown field", "    key: ip\n", "    key: ip\n    limt: 3\n",
			`f.yaml:4:5: rules[0].limt: found unknown field "limt"; allowed: name, key,`, ""},
		{"unknown top-level field", "rules:\n", "colour: blue\nrules:\n",
			`f.yaml:1:1: colour: found unknown field "colour"; allowed: prefix, client_ip,`, ""},
		{"repeated field", "    key: ip\n", "    key: ip\n    key: route\n",
			`f.yaml:4:5: rules[0].key: found the field a second time; allowed once (first at line 3)`, ""},
		{"missing field", "    key: ip\n", "",
			`f.yaml:2:5: rules[0].key: found no value; required`, ""},
		{"no algorithm", "    sliding_window: 100/1m\n", "",
			`f.yaml:2:5: rules[0]: found no algorithm; required: one of fixed_window,`, ""},
		{"two algorithms", "    sliding_window: 100/1m\n", "    sliding_window: 100/1m\n    gcra: 1/s\n",
			`f.yaml:5:11: rules[0].gcra: found a second algorithm (sliding_window is set)`, ""},
		{"second algorithm in file order", "    gcra: 5000/s burst 10000\n", "    gcra: 5000/s burst 10000\n    fixed_window: 1/s\n",
			`f.yaml:8:19: rules[1].fixed_window: found a second algorithm (gcra is set)`, ""},
		{"rate that does not parse", "100/1m", "100 per minute",
			`f.yaml:4:21: rules[0].sliding_window: found "100 per minute": "100" is not <n>/<period>; allowed: "<n>/<period>"`, ""},
		{"algorithm out of range", "5000/s burst 10000", "5000/ms burst 10000",
			`f.yaml:7:11: rules[1].gcra: found "5000/ms burst 10000": GCRA.`, "allowed:"},
		{"unknown word", "5000/s burst 10000", "5000/s bursts 10000",
			`f.yaml:7:11: rules[1].gcra: found "5000/s bursts 10000": unexpected "bursts"; allowed:`, ""},
		{"wrong key kind", "    key: ip\n", "    key: client\n",
			`f.yaml:3:10: rules[0].key: found "client"; allowed: "ip", "route", "method", or a mapping of one of header,`, ""},
		{"unknown key field", "{constant: all}", "{constnt: all}",
			`f.yaml:6:11: rules[1].key.constnt: found unknown field "constnt"; allowed: header, metadata, descriptor, constant, form, func, join`, ""},
		{"gRPC identity on an HTTP stack", "{constant: all}", "{metadata: x-tenant}",
			`f.yaml:6:21: rules[1].key.metadata: found metadata x-tenant (hashed), read on gRPC only, in rule "global" of HTTP stack "api"; allowed there: ip, constant, header, route, form, func, or a join of them`, ""},
		{"match and methods", "    match: [\"/api/\"]\n", "    match: [\"/api/\"]\n    methods: [\"/pkg.S/*\"]\n",
			`f.yaml:12:14: stacks[0].methods: found both match and methods; allowed: one of them`, ""},
		{"bad method pattern", "    match: [\"/api/\"]\n", "    methods: [\"pkg.S/M\"]\n",
			`f.yaml:11:15: stacks[0].methods[0]: found "pkg.S/M"; allowed: a gRPC full method`, ""},
		{"unregistered func", "{constant: all}", "{func: tenant}",
			`f.yaml:6:17: rules[1].key.func: found "tenant"; allowed: one of the names the program registers: "plan", "user"`, ""},
		{"bad name", "name: per-ip", "name: per ip",
			`f.yaml:2:11: rules[0].name: found "per ip"; allowed: 1 to 64 bytes of [A-Za-z0-9._-]`, ""},
		{"duplicate rule", "name: global", "name: per-ip",
			`f.yaml:5:11: rules[1].name: found "per-ip" again; allowed: a name no other rule has (first at line 2)`, ""},
		{"lease on a log", "    sliding_window: 100/1m\n", "    sliding_log: 100/1m\n    lease: 1s\n",
			`f.yaml:5:12: rules[0].lease: found "1s": a SlidingLog(100 per 1m0s) cannot be leased`,
			"; allowed: a lease only on fixed_window, sliding_window, token_bucket, leaky_bucket or gcra"},
		{"lease on a shadow rule", "    gcra: 5000/s burst 10000\n", "    gcra: 5000/s burst 10000\n    shadow: true\n    lease: 1s\n",
			`f.yaml:9:12: rules[1].lease: found "1s": a shadow rule cannot be leased`,
			"; allowed: no lease on a shadow rule (remove shadow or lease)"},
		{"lease with a penalty", "    gcra: 5000/s burst 10000\n", "    gcra: 5000/s burst 10000\n    penalty: 1m\n    lease: 1s\n",
			`f.yaml:9:12: rules[1].lease: found "1s": a leased rule cannot take blocks`,
			"; allowed: no lease on a rule with penalty or blockable (remove them or lease)"},
		{"lease too long", "    gcra: 5000/s burst 10000\n", "    gcra: 5000/s burst 10000\n    lease: 2m\n",
			`f.yaml:8:12: rules[1].lease: found "2m0s": lease 2m0s outside 0 to 1m0s`, ""},
		{"penalty too long", "    gcra: 5000/s burst 10000\n", "    gcra: 5000/s burst 10000\n    penalty: 5000d\n",
			`f.yaml:8:14: rules[1].penalty: found "5000d"; allowed: a duration`, ""},
		{"not a boolean", "    key: ip\n", "    key: ip\n    optional: yes\n",
			`f.yaml:4:15: rules[0].optional: found "yes"; allowed: true or false`, ""},
		{"bad CIDR", "rules:\n", "exempt: [10.0.0.0/33]\nrules:\n",
			`f.yaml:1:10: exempt[0]: found "10.0.0.0/33"; allowed: a CIDR or an address`, ""},
		{"unknown forwarding header", "rules:\n", "client_ip:\n  trusted_proxies: [10.0.0.0/8]\n  header: X-Client-IP\nrules:\n",
			`f.yaml:3:11: client_ip.header: found "X-Client-IP"; allowed: X-Real-IP, X-Forwarded-For or Forwarded, in any case`, ""},
		{"forwarding header not a name", "rules:\n", "client_ip:\n  header: [X-Real-IP]\nrules:\n",
			`f.yaml:2:11: client_ip.header: found a list; allowed: X-Real-IP, X-Forwarded-For or Forwarded`, ""},
		{"failure policy", "rules:\n", "fail: sometimes\nrules:\n",
			`f.yaml:1:7: fail: found "sometimes"; allowed: "open" (serve requests Redis failed to decide) or "closed"`, ""},
		{"unknown rule in a stack", "[per-ip, global]", "[per-ip, globl]",
			`f.yaml:10:21: stacks[0].rules[1]: found "globl"; allowed: a rule of this file (global, per-ip)`, ""},
		{"bad pattern", `["/api/"]`, `["GET api"]`,
			`f.yaml:11:13: stacks[0].match[0]: found "GET api":`, "allowed: an http.ServeMux pattern"},
		{"conflicting patterns", "    match: [\"/api/\"]\n", "    match: [\"/api/\"]\n  - name: other\n    rules: [global]\n    match: [\"/api/\"]\n",
			`f.yaml:14:13: stacks[1].match[0]: found "/api/": it conflicts with the pattern "/api/" of another stack`, ""},
		{"a gRPC method in two stacks", "    match: [\"/api/\"]\n", "    methods: [\"/pkg.S/*\"]\n  - name: other\n    rules: [global]\n    methods: [\"/pkg.S/M\", \"/pkg.S/*\"]\n",
			`f.yaml:14:27: stacks[1].methods[1]: found "/pkg.S/*": stack "api" names it too (line 11); allowed: a method or service no other stack names`, ""},
		{"no stacks", "stacks:\n  - name: api\n    rules: [per-ip, global]\n    match: [\"/api/\"]\n", "stacks: []\n",
			`f.yaml:8:9: stacks: found an empty list; required: one or more stacks`, ""},
		{"a list expected", "[per-ip, global]", "per-ip",
			`f.yaml:10:12: stacks[0].rules: found "per-ip"; allowed: a list of rule names`, ""},
		{"YAML syntax", "    key: ip\n", "   key: ip\n",
			`f.yaml:`, "(syntax)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.from) {
				t.Fatalf("%q is not in the valid file", tc.from)
			}
			data := strings.Replace(valid, tc.from, tc.to, 1)
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
	if _, err := Read("f.yaml", []byte(valid), funcs); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
}

// TestClientIPHeader: client_ip.header names the one forwarding field
// the trusted proxies set, in any case, and Check's text says so.
func TestClientIPHeader(t *testing.T) {
	for _, name := range []string{"X-Real-IP", "x-forwarded-for", "FORWARDED"} {
		data := strings.Replace(valid, "rules:\n", "client_ip:\n  trusted_proxies: [10.0.0.0/8]\n  header: "+name+"\nrules:\n", 1)
		f, err := Read("f.yaml", []byte(data), funcs)
		if err != nil {
			t.Fatalf("header %s: %v", name, err)
		}
		if f.ClientIP.Header != name {
			t.Errorf("header %s: read %q", name, f.ClientIP.Header)
		}
		if want := "client IP (behind 10.0.0.0/8, reading " + name + " only;"; !strings.Contains(f.String(), want) {
			t.Errorf("Check's text\n%s\nlacks %q", f, want)
		}
	}
}

// TestEveryErrorAtOnce: a file with several problems reports all of
// them, in the order of their lines, not the first alone.
func TestEveryErrorAtOnce(t *testing.T) {
	data := `rules:
  - name: a
    key: ipp
    sliding_window: 100/1x
  - name: b
    key: {header: X-Key}
    gcra: 10/s
    lease: 1s
    penalty: 1m
    color: red
stacks:
  - name: api
    rules: [a, c]
    fail: maybe
`
	_, err := Read("f.yaml", []byte(data), nil)
	want := []string{
		"f.yaml:3:10: rules[0].key:",
		"f.yaml:4:21: rules[0].sliding_window:",
		"f.yaml:8:12: rules[1].lease: found \"1s\": a leased rule cannot take blocks",
		"f.yaml:10:5: rules[1].color:",
		"f.yaml:13:16: stacks[0].rules[1]:",
		"f.yaml:14:11: stacks[0].fail:",
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d: got %s, want %s...", i, got[i], want[i])
		}
	}
}

// TestJSONSyntaxPosition: a JSON file that breaks JSON's syntax is
// reported at the line and column of the break.
func TestJSONSyntaxPosition(t *testing.T) {
	data := "{\n\t\"rules\": [\n\t\t{\"name\": \"a\",, \"key\": \"ip\"}\n\t]\n}\n"
	_, err := Read("f.json", []byte(data), nil)
	if want := "f.json:3:16: (syntax): invalid character ','"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s...", err, want)
	}
}

// TestGRPCKeysCallsCanCarry: a metadata key, or a header a gRPC stack
// reads as metadata, with a character gRPC refuses in a key is a problem
// at its position: no call can carry it, so every call would be refused
// for lacking it. Upper case is the lower-case key.
func TestGRPCKeysCallsCanCarry(t *testing.T) {
	const file = "rules:\n  - name: r\n    key: %s\n    gcra: 1/s\nstacks:\n  - name: calls\n    rules: [r]\n    methods: [\"/pkg.S/*\"]\n"
	for _, tc := range []struct{ key, want string }{
		{"{metadata: x~tenant}", `f.yaml:3:21: rules[0].key.metadata: found "x~tenant"; allowed: a metadata key: letters, digits, "-", "_" and "."`},
		{"{header: X~Tenant}", `f.yaml:3:19: rules[0].key.header: found header X~Tenant (hashed), in rule "r" of gRPC stack "calls", a key no call can carry; allowed there: letters, digits, "-", "_" and "."`},
		{"{join: [ip, {header: \"X|Tenant\"}]}", `f.yaml:3:31: rules[0].key.join[1].header: found header X|Tenant (hashed), in rule "r" of gRPC stack "calls", a key no call can carry`},
	} {
		_, err := Read("f.yaml", []byte(fmt.Sprintf(file, tc.key)), funcs)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("key %s: got %v\nwant %s...", tc.key, err, tc.want)
		}
	}
	plan := strings.Replace(fmt.Sprintf(file, "ip"), "    gcra: 1/s\n", "    gcra: 1/s\n    plans:\n      metadata: x~plan\n      values: {pro: {gcra: 2/s}}\n", 1)
	if _, err := Read("f.yaml", []byte(plan), funcs); err == nil || !strings.HasPrefix(err.Error(), `f.yaml:6:17: rules[0].plans.metadata: found metadata x~plan (hashed), in rule "r" of gRPC stack "calls", a key no call can carry`) {
		t.Errorf("a plan by metadata x~plan: got %v", err)
	}
	for _, key := range []string{"{metadata: X-Tenant.Id_2}", "{header: X-Tenant}", "{metadata: x-token-bin}"} {
		if _, err := Read("f.yaml", []byte(fmt.Sprintf(file, key)), funcs); err != nil {
			t.Errorf("key %s: %v", key, err)
		}
	}
}
