package parse

import (
	"strings"
	"testing"
)

// TestSyntaxErrorPositions: a YAML syntax error is placed at the character
// the parser stopped at (its problem mark), not at the line of the block
// or flow collection it was reading, and not always at column 1.
func TestSyntaxErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           string // the whole error
	}{
		{"unclosed flow sequence", "[per-ip, global]", "[per-ip, global",
			`f.yaml:11:10: (syntax): did not find expected ',' or ']'`},
		{"unclosed flow mapping", "{constant: all}", "{constant: all",
			`f.yaml:7:9: (syntax): did not find expected ',' or '}'`},
		{"tab indentation", "    key: ip\n", "\tkey: ip\n",
			`f.yaml:3:1: (syntax): found a tab character that violates indentation`},
		{"bad indentation", "    key: ip\n", "   key: ip\n",
			`f.yaml:3:4: (syntax): did not find expected '-' indicator`},
		{"unterminated quote", "    key: ip\n", "    key: 'ip\n",
			`f.yaml:12:1: (syntax): found unexpected end of stream`},
		{"missing colon", "    key: ip\n", "    key ip\n",
			`f.yaml:4:5: (syntax): could not find expected ':'`},
		{"character that cannot start a token", "    key: ip\n", "    key: @ip\n",
			`f.yaml:3:10: (syntax): found character that cannot start any token`},
		{"control character", "    key: ip\n", "    key: i\x01p\n",
			`f.yaml:3:11: (syntax): control characters are not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.from) {
				t.Fatalf("%q is not in the valid file", tc.from)
			}
			data := strings.Replace(valid, tc.from, tc.to, 1)
			_, err := Read("f.yaml", []byte(data), funcs)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
