package parse_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestSchemaHasTheParsersFields: schema.json, for editors, names exactly
// the fields the parser reads, at every level.
func TestSchemaHasTheParsersFields(t *testing.T) {
	data, err := os.ReadFile("../../schema.json")
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var schema struct {
		object
		Defs map[string]object `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		obj  object
		want []string
	}{
		{"file", schema.object, parse.FileFields},
		{"rule", schema.Defs["rule"], parse.RuleFields},
		{"stack", schema.Defs["stack"], parse.StackFields},
		{"algorithm", schema.Defs["algorithm"], parse.KindFields},
	} {
		got := slices.Sorted(maps.Keys(tc.obj.Properties))
		if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
			t.Errorf("%s: schema has %v, the parser reads %v", tc.what, got, want)
		}
	}
}

// value is one value of a field, and whether the loader accepts it.
type value struct {
	v  any // as written in the JSON file
	ok bool
	// beyond, when set, is why schema.json cannot judge v as the loader
	// does: the schema side leaves v out.
	beyond string
}

// Why schema.json cannot follow the loader for some values.
const (
	minPeriod   = "a period or ttl must be at least 1ms, a bound on the sum of the duration's parts"
	maxQuantity = "a count must be at most 2^53-1, and times its period in µs too"
	maxLog      = "a sliding log's or a concurrency limit's count is at most 100000"
	maxDays     = "whole days are at most 3650"
	maxLease    = "a lease is at most 1m, a bound on the sum of the duration's parts"
	maxPenalty  = "a penalty is at most 3650d, a bound on the sum of the duration's parts"
	numberText  = "the loader reads a number as its text (404, 0.0), which a schema never sees: it compares numbers by value"
)

// counts are the values of a count: a rate's n, a burst.
var counts = []value{
	{v: "1", ok: true}, {v: "200", ok: true}, {v: "+200", ok: true}, {v: "0200", ok: true},
	{v: "0"}, {v: "00"}, {v: "-1"}, {v: "1.5"}, {v: "1e3"}, {v: "x"}, {v: "2O0"},
	{v: "9007199254740992", beyond: maxQuantity},
}

// periods are the values of a positive duration: a rate's period, a ttl.
var periods = []value{
	{v: "1m", ok: true}, {v: "1h30m", ok: true}, {v: "90s", ok: true}, {v: "1.5s", ok: true},
	{v: ".5s", ok: true}, {v: "1.s", ok: true}, {v: "+1m", ok: true}, {v: "0s1m", ok: true},
	{v: "1000us", ok: true}, {v: "1000µs", ok: true}, {v: "1000μs", ok: true}, {v: "1000000ns", ok: true},
	{v: "1ms", ok: true}, {v: "7d", ok: true}, {v: "+07d", ok: true},
	{v: "0"}, {v: "0s"}, {v: "0.0m"}, {v: "0d"}, {v: "-0d"}, {v: "-1m"}, {v: "-7d"}, {v: "1"}, {v: "h1"},
	{v: "1x"}, {v: "1M"}, {v: "1H"}, {v: ".s"}, {v: "1..5s"}, {v: "1d1h"}, {v: "1h1d"}, {v: "1.5d"}, {v: "1 m"},
	{v: "1ns", beyond: minPeriod}, {v: "0.5ms", beyond: minPeriod},
}

// durations are the values of a duration that may be zero: a lease, a
// penalty, a queue's max_delay.
var durations = []value{
	{v: "0", ok: true}, {v: "-0", ok: true}, {v: "+0", ok: true}, {v: "0s", ok: true}, {v: "-0s", ok: true},
	{v: "-0.0ms", ok: true}, {v: "0d", ok: true}, {v: "-0d", ok: true}, {v: "1ns", ok: true},
	{v: "250ms", ok: true}, {v: "1.5s", ok: true}, {v: "30s", ok: true}, {v: "0m30s", ok: true}, {v: "1m", ok: true},
	{v: "-1s"}, {v: "-0.1s"}, {v: "-1d"}, {v: "1"}, {v: "00"}, {v: "s"}, {v: "1d1h"}, {v: "1.5d"},
}

// durationFields are the values of a lease or a penalty besides
// durations: a field's value is not split into words, and may be a number.
var durationFields = append(slices.Clone(durations),
	value{v: " 1s"}, value{v: "1s "}, value{v: 0, ok: true}, value{v: 1},
	value{v: json.RawMessage("0.0"), beyond: numberText})

// with is vs, each v put into form, keeping whether it is accepted.
func with(form string, vs []value) []value {
	out := make([]value, len(vs))
	for i, v := range vs {
		out[i] = value{fmt.Sprintf(form, v.v), v.ok, v.beyond}
	}
	return out
}

// wordValue is a value for the word of an algorithm that takes one.
func wordValue(word string) string {
	if word == "burst" {
		return "200"
	}
	return "30s"
}

// kindValues are the values of algorithm field k: its head (a rate or a
// count), each word it takes, words of other algorithms, and spacing.
func kindValues(k parse.Kind) []value {
	var head string
	var vs []value
	if k.Rate {
		head = "100/1m"
		vs = append(with("%s/1m", counts), with("100/%s", periods)...)
		for _, u := range slices.Sorted(maps.Keys(parse.Units)) {
			vs = append(vs, value{v: "100/" + u, ok: true})
		}
		vs = append(vs, value{v: "100/us"}, value{v: "100/sec30s"}, value{v: "100"}, value{v: "100/"},
			value{v: "/1m"}, value{v: "100//1m"}, value{v: "100/1m/2"}, value{v: "100 /1m"}, value{v: ""}, value{v: " "})
	} else {
		// A concurrency limit is a count and its ttl.
		head = "50 ttl 30s"
		vs = append(with("%s ttl 30s", counts), with("50 ttl %s", periods)...)
		vs = append(vs, value{v: "50"}, value{v: "50 ttl"}, value{v: "50/s ttl 30s"}, value{v: "ttl 30s"},
			value{v: "50 ttl 30s ttl 30s"}, value{v: "50ttl 30s"}, value{v: "50 ttl m"}, value{v: "100001 ttl 1s", beyond: maxLog})
	}
	for _, word := range slices.Sorted(maps.Keys(k.Words)) {
		if word == "ttl" {
			continue // in the head
		}
		w := head + " " + word
		if !k.Words[word] {
			vs = append(vs, value{v: w, ok: true}, value{v: w + " " + word}, value{v: w + " 1"}, value{v: head + word})
			continue
		}
		switch word {
		case "burst":
			vs = append(vs, with(w+" %s", counts)...)
		default:
			vs = append(vs, with(w+" %s", durations)...)
		}
		vs = append(vs, value{v: "100/1h30m " + word + " " + wordValue(word), ok: true}, value{v: w}, value{v: w + " 1s 1s"}, value{v: w + " " + wordValue(word) + " " + word + " " + wordValue(word)})
		head = w + " " + wordValue(word)
	}
	for _, other := range parse.Kinds {
		for word, takes := range other.Words {
			if _, ok := k.Words[word]; !ok {
				w := head + " " + word
				if takes {
					w += " " + wordValue(word)
				}
				vs = append(vs, value{v: w})
			}
		}
	}
	for _, space := range []string{" ", "  ", "\t", "\n", "\u00a0", "\u3000"} {
		vs = append(vs, value{v: strings.ReplaceAll(head, " ", space) + space, ok: true},
			value{v: space + head, ok: true})
	}
	return vs
}

// fieldValues are the values of every field schema.json gives a pattern or
// bounds, by field: each algorithm's, a rule's lease, penalty and name, the
// client_ip prefixes and header, and the failure policy.
func fieldValues() map[string][]value {
	vs := map[string][]value{
		"lease": append(slices.Clone(durationFields),
			value{v: "2m", beyond: maxLease}, value{v: "1m0.1s", beyond: maxLease}),
		"penalty": append(slices.Clone(durationFields),
			value{v: "15m", ok: true}, value{v: "1h30m", ok: true}, value{v: "3650d", ok: true}, value{v: "+3650d", ok: true},
			value{v: "3651d", beyond: maxDays}, value{v: "87601h", beyond: maxPenalty}),
		"name": {{v: "per-ip", ok: true}, {v: "A.b_c-9", ok: true}, {v: strings.Repeat("n", 64), ok: true},
			{v: strings.Repeat("n", 65)}, {v: ""}, {v: "per ip"}, {v: "per:ip"}, {v: "é"},
			{v: 404, ok: true, beyond: numberText}},
		"ipv4_prefix": {{v: 1, ok: true}, {v: 32, ok: true}, {v: 0}, {v: 33}, {v: -1}, {v: "24"}, {v: 24.5},
			{v: json.RawMessage("24.0"), beyond: numberText}},
		"ipv6_prefix": {{v: 1, ok: true}, {v: 128, ok: true}, {v: 0}, {v: 129}, {v: "48"}},
		"header": {{v: "X-Real-IP", ok: true}, {v: "x-real-ip", ok: true}, {v: "X-Forwarded-For", ok: true},
			{v: "x-FORWARDED-for", ok: true}, {v: "Forwarded", ok: true}, {v: "FORWARDED", ok: true},
			{v: ""}, {v: "X-Client-IP"}, {v: "X-Real-IP "}, {v: "X-Forwarded"}, {v: "Forwarded-For"}, {v: 1},
			{v: []string{"X-Real-IP"}}},
		"fail": {{v: "open", ok: true}, {v: "closed", ok: true}, {v: "Open"}, {v: "sometimes"}, {v: true}},
	}
	for _, k := range parse.Kinds {
		vs[k.Field] = kindValues(k)
	}
	return vs
}

// fileWith is the smallest rules file, in JSON, that has value v in field:
// a rule's field, a client_ip field (a prefix, header) or a top-level one; an algorithm is
// the rule's, or with inPlan its plan's.
func fileWith(t *testing.T, field string, v any, inPlan bool) []byte {
	t.Helper()
	rule := map[string]any{"name": "r", "key": "ip", "gcra": "10/s"}
	stack := map[string]any{"name": "api", "rules": []string{"r"}}
	file := map[string]any{"rules": []any{rule}, "stacks": []any{stack}}
	switch {
	case inPlan:
		rule["plans"] = map[string]any{"header": "X-Plan", "values": map[string]any{"pro": map[string]any{field: v}}}
	case slices.Contains(parse.KindFields, field):
		delete(rule, "gcra")
		rule[field] = v
	case field == "name":
		rule[field] = v
		stack["rules"] = []string{fmt.Sprint(v)}
	case strings.HasSuffix(field, "_prefix"), field == "header":
		file["client_ip"] = map[string]any{field: v}
	case slices.Contains(parse.FileFields, field):
		file[field] = v
	default:
		rule[field] = v
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSchemaAgreesWithLoader: every value of fieldValues is accepted, or
// refused, both by Load and by schema.json under a JSON Schema validator,
// as the table says; algorithms both as a rule's and as a plan's.
func TestSchemaAgreesWithLoader(t *testing.T) {
	schema, err := jsonschema.NewCompiler().Compile("../../schema.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for field, vs := range fieldValues() {
		for _, inPlan := range []bool{false, true} {
			if inPlan && !slices.Contains(parse.KindFields, field) {
				continue
			}
			for _, v := range vs {
				data := fileWith(t, field, v.v, inPlan)
				shown, _ := json.Marshal(v.v) // fileWith marshalled it already
				path := filepath.Join(dir, "rules.json")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				limits, err := config.Load(path, memstore.Must())
				if err == nil {
					limits.Close()
				}
				if loaded := err == nil; loaded != v.ok {
					t.Errorf("%s %s (in a plan: %v): the loader accepts it: %v, the table says %v (%v)", field, shown, inPlan, loaded, v.ok, err)
				}
				if v.beyond != "" {
					continue
				}
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				err = schema.Validate(doc)
				if valid := err == nil; valid != v.ok {
					t.Errorf("%s %s (in a plan: %v): the schema accepts it: %v, the loader %v", field, shown, inPlan, valid, v.ok)
				}
			}
		}
	}
}
