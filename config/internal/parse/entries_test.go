package parse

import (
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
