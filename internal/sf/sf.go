// Package sf reads the Structured Field lists (RFC 9651) of the RateLimit
// headers as far as they are used here: members that are a string item
// with parameters, e.g. "per-ip";r=42;t=17.
package sf

import "strings"

// Members splits a list at the commas outside strings; members are trimmed
// and empty ones dropped.
func Members(field string) []string {
	var out []string
	inString, escaped, start := false, false, 0
	for i := 0; i < len(field); i++ {
		switch c := field[i]; {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case c == ',' && !inString:
			out = appendMember(out, field[start:i])
			start = i + 1
		}
	}
	return appendMember(out, field[start:])
}

func appendMember(out []string, m string) []string {
	if m = strings.TrimSpace(m); m != "" {
		out = append(out, m)
	}
	return out
}

// Name is the string item a member starts with ("" if it starts with none).
func Name(member string) string {
	if !strings.HasPrefix(member, `"`) {
		return ""
	}
	if end := strings.IndexByte(member[1:], '"'); end >= 0 {
		return member[1 : 1+end]
	}
	return ""
}

// Param is the value of the member's parameter key, as written (ok false
// when absent, or when the key has no value: a boolean true). Parameters
// follow the item: ;key=value. A key given twice is its last, as RFC 9651
// parses parameters.
func Param(member, key string) (value string, ok bool) {
	rest := member
	if name := Name(member); name != "" {
		rest = member[len(name)+2:]
	}
	for part := range strings.SplitSeq(rest, ";") {
		if k, v, found := strings.Cut(strings.TrimSpace(part), "="); k == key {
			value, ok = v, found
		}
	}
	return value, ok
}
