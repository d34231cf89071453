// Package token tells HTTP tokens (RFC 9110, 5.6.2), what a header field
// name must be, from anything else.
package token

// Valid reports whether s is a token: one or more of the letters,
// digits and !#$%&'*+-.^_`|~.
func Valid(s string) bool {
	for i := 0; i < len(s); i++ {
		if !char(s[i]) {
			return false
		}
	}
	return s != ""
}

// char reports whether c may appear in a token.
func char(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
