package sf

import (
	"slices"
	"testing"
)

func TestMembersNamesParams(t *testing.T) {
	field := `"per-ip";r=42;t=17, "a,b";q=5 ,, "esc\"aped";w=1`
	got := Members(field)
	want := []string{`"per-ip";r=42;t=17`, `"a,b";q=5`, `"esc\"aped";w=1`}
	if !slices.Equal(got, want) {
		t.Fatalf("Members = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		member, name, key, value string
		ok                       bool
	}{
		{want[0], "per-ip", "t", "17", true},
		{want[0], "per-ip", "q", "", false},
		{want[1], "a,b", "q", "5", true},
		{`token;r=1`, "", "r", "1", true},
	} {
		if got := Name(tc.member); got != tc.name {
			t.Errorf("Name(%q) = %q, want %q", tc.member, got, tc.name)
		}
		if v, ok := Param(tc.member, tc.key); v != tc.value || ok != tc.ok {
			t.Errorf("Param(%q, %q) = %q, %v; want %q, %v", tc.member, tc.key, v, ok, tc.value, tc.ok)
		}
	}
}

// TestParamLastWins: a parameter given twice is the last one, as RFC 9651
// (4.2.3.2) parses parameters, overwriting a key already seen; a key
// without a value (true) overwrites too.
func TestParamLastWins(t *testing.T) {
	for _, tc := range []struct {
		member, value string
		ok            bool
	}{
		{`"p";r=5;r=3`, "3", true},
		{`"p";r=5;t=1;r=0`, "0", true},
		{`"p";r=5;r`, "", false},
		{`"p";r;r=7`, "7", true},
	} {
		if v, ok := Param(tc.member, "r"); v != tc.value || ok != tc.ok {
			t.Errorf("Param(%q, r) = %q, %v; want %q, %v", tc.member, v, ok, tc.value, tc.ok)
		}
	}
}
