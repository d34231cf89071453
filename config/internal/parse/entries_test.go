package parse

import (
	"fmt"
	"strings"
	"testing"
)

// TestListEntriesAtTheirPlace: a problem of an entry of a list (a stack's
// rules, match patterns and methods, exempt networks) names the entry's
// own index and position, also after an entry that is not text; a valid
// entry after one that is not is not reported.
func TestListEntriesAtTheirPlace(t *testing.T) {
	data := `rules:
  - name: a
    key: ip
    fixed_window: 1/s
exempt: [[], nowhere]
stacks:
  - name: s
    rules: [[], a, nope]
    match: [[], "/x/", "/x/"]
  - name: g
    rules: [a]
    methods: ["", "/x.Y/*", "bad"]
`
	_, err := Read("f.yaml", []byte(data), nil)
	want := []string{
		`f.yaml:5:10: exempt[0]: found an empty list`,
		`f.yaml:5:14: exempt[1]: found "nowhere"`,
		`f.yaml:8:13: stacks[0].rules[0]: found an empty list`,
		`f.yaml:8:20: stacks[0].rules[2]: found "nope"; allowed: a rule of this file (a)`,
		`f.yaml:9:13: stacks[0].match[0]: found an empty list`,
		`f.yaml:9:24: stacks[0].match[2]: found "/x/": it conflicts with the pattern "/x/"`,
		`f.yaml:12:15: stacks[1].methods[0]: found ""`,
		`f.yaml:12:29: stacks[1].methods[2]: found "bad"; allowed: a gRPC full method`,
	}
	if err == nil {
		t.Fatal("no problem found")
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(got), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: got %s, want %s...", i, got[i], want[i])
		}
	}
}

// TestEmptyPlanValue: a plan for the empty value is a problem at it: a
// request without the attribute is decided by the rule's algorithm, and
// such a plan would have taken its place.
func TestEmptyPlanValue(t *testing.T) {
	data := `rules:
  - name: a
    key: ip
    fixed_window: 100/1m
    plans:
      header: X-Plan
      values:
        pro: {fixed_window: 1000/1m}
        "": {fixed_window: 1/1m}
stacks:
  - name: s
    rules: [a]
`
	_, err := Read("f.yaml", []byte(data), nil)
	if want := `f.yaml:9:9: rules[0].plans.values: found an empty value; allowed: `; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s...", err, want)
	}
}

// TestManyUnknownRulesBounded: a stack naming many rules the file does
// not have is a problem for each, and each lists a bounded number of the
// file's rules: listing them all in each made a file of 1.3 MB take
// gigabytes.
func TestManyUnknownRulesBounded(t *testing.T) {
	const n = 1000
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: rule-%d, key: ip, fixed_window: 1/s}\n", i)
	}
	b.WriteString("stacks:\n  - name: s\n    rules: [")
	for i := range n {
		fmt.Fprintf(&b, "x%d, ", i)
	}
	b.WriteString("rule-0]\n")
	_, err := Read("f.yaml", []byte(b.String()), nil)
	problems := strings.Split(fmt.Sprint(err), "\n")
	if len(problems) != n {
		t.Fatalf("%d problems, want %d", len(problems), n)
	}
	want := `f.yaml:1004:13: stacks[0].rules[0]: found "x0"; allowed: a rule of this file (rule-0, rule-1, rule-10, rule-100, rule-101, rule-102, rule-103, rule-104, rule-105, rule-106, and 990 more)`
	if problems[0] != want {
		t.Errorf("got %s, want %s", problems[0], want)
	}
	if size := len(fmt.Sprint(err)); size > 200*n {
		t.Errorf("the problems take %d bytes", size)
	}
}

// TestLongStackBounded: a stack's long list of rules is checked in time
// and space in proportion to it: each entry was looked for among those
// before it, and each entry naming a rule its door cannot read (one
// rule, named again and again) quoted the rule's whole key.
func TestLongStackBounded(t *testing.T) {
	var distinct, repeated strings.Builder
	distinct.WriteString("rules:\n  - {name: r, key: ip, fixed_window: 1/s}\nstacks:\n  - name: s\n    rules: [r")
	for i := range 200_000 {
		fmt.Fprintf(&distinct, ", x%d", i)
	}
	distinct.WriteString("]\n")
	repeated.WriteString("rules:\n  - name: r\n    key: {join: [ip")
	for i := range 2000 {
		fmt.Fprintf(&repeated, ", {form: f%d}", i)
	}
	repeated.WriteString("]}\n    fixed_window: 1/s\nstacks:\n  - name: g\n    methods: [/a.B/*]\n    rules: [r" + strings.Repeat(", r", 1999) + "]\n")
	for _, tc := range []struct {
		name, file string
		problems   int
	}{
		{"distinct", distinct.String(), 200_000},
		{"repeated", repeated.String(), 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readWithin(t, tc.file)
			text := fmt.Sprint(err)
			if got := strings.Count(text, "\n") + 1; got != tc.problems {
				t.Errorf("%d problems, want %d", got, tc.problems)
			}
			if len(text) > 200*tc.problems {
				t.Errorf("the problems take %d bytes", len(text))
			}
		})
	}
}
