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
