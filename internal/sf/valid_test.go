package sf

import "testing"

// Valid accepts each kind of item and inner lists, with parameters, and
// refuses what a Structured Field parser would.
func TestValid(t *testing.T) {
	for _, m := range []string{
		`"per-ip";r=42;t=17`, `default;q=100;w=60`, `7`, `-1.5;a`, `?1;x=?0`, `:aGk=:`, `@1700000000`,
		`%"caf%c3%a9"`, `("a" b 1);p=*x`, `()`, `"esc\"aped\\"`, `*tok:en/x`, `a;b;c=1`, `"x"; k=1`,
	} {
		if !Valid(m) {
			t.Errorf("Valid(%q) = false, want true", m)
		}
	}
	for _, m := range []string{
		``, `limit=100`, `"unterminated`, `"a";=5`, `"a";R=1`, `"a" "b"`, `"c";r=x y`, `1.2345`, `1234567890123456`,
		`@1.5`, `?2`, `:aGk=`, `%"A%C3"`, `%"x`, `("a",b)`, `("a"`, `"bad\n"`, `"tab	"`, `-`, `"a";r=`,
	} {
		if Valid(m) {
			t.Errorf("Valid(%q) = true, want false", m)
		}
	}
}
