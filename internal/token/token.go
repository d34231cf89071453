// Package token tells HTTP tokens (RFC 9110, 5.6.2), what a header field
// name must be, and gRPC metadata keys from anything else.
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

// MetadataKey reports whether s is a key a gRPC call can carry, in any
// case (gRPC's keys are lower case, and a call's are read so): one or
// more of the letters, digits, "-", "_" and ".".
func MetadataKey(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return s != ""
}
