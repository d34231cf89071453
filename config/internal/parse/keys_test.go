package parse

import "testing"

// TestJoinOfJoins: a join inside a join is a problem at it. Each level of
// nesting escapes the level below again, doubling its escapes, so a key
// of a few nested joins made every request build an identity of millions
// of bytes.
func TestJoinOfJoins(t *testing.T) {
	data := `rules:
  - name: a
    key: {join: [ip, {join: [{constant: x}, {header: X-Key}]}]}
    fixed_window: 1/s
stacks:
  - name: s
    rules: [a]
`
	_, err := Read("f.yaml", []byte(data), nil)
	want := `f.yaml:3:22: rules[0].key.join[1]: found a mapping; allowed: "ip", "route", "method", or a mapping of one of header, metadata, descriptor, constant, form, func (a join's parts are not joins)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestJoinNotAListIsOneProblem: a join whose value is not a list is one
// problem, not also reported as a list of fewer than two identities.
func TestJoinNotAListIsOneProblem(t *testing.T) {
	for _, v := range []string{"null", "ip", "{header: X}"} {
		data := "rules:\n  - name: a\n    key: {join: " + v + "}\n    fixed_window: 1/s\nstacks:\n  - name: s\n    rules: [a]\n"
		_, err := Read("f.yaml", []byte(data), nil)
		if ps := unjoin(err); len(ps) != 1 {
			t.Errorf("join: %s: %d problems (%v), want one", v, len(ps), err)
		}
	}
}
