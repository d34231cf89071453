package sf

import "strings"

// Valid reports whether m, a member as Members returns it, is a
// well-formed member of a Structured Field list (RFC 9651, 4.2.1.1): an
// item or an inner list, each with its parameters, and nothing after.
// A field that holds one malformed member fails to parse as a whole, so a
// writer that merges members keeps only the valid ones.
func Valid(m string) bool {
	p := parser{s: m}
	ok := false
	if p.peek() == '(' {
		ok = p.innerList()
	} else {
		ok = p.item()
	}
	return ok && p.i == len(p.s)
}

// parser reads s from i on.
type parser struct {
	s string
	i int
}

// peek is the byte at i, 0 at the end.
func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// innerList reads "(" items separated by spaces ")" and its parameters.
func (p *parser) innerList() bool {
	p.i++
	for {
		for p.peek() == ' ' {
			p.i++
		}
		if p.peek() == ')' {
			p.i++
			return p.params()
		}
		if !p.item() {
			return false
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return false
		}
	}
}

// item reads a bare item and its parameters.
func (p *parser) item() bool { return p.bareItem() && p.params() }

// params reads any number of ";" key ["=" bare item].
func (p *parser) params() bool {
	for p.peek() == ';' {
		p.i++
		for p.peek() == ' ' {
			p.i++
		}
		if c := p.peek(); c != '*' && (c < 'a' || c > 'z') {
			return false
		}
		for p.i++; isKey(p.peek()); p.i++ {
		}
		if p.peek() == '=' {
			p.i++
			if !p.bareItem() {
				return false
			}
		}
	}
	return true
}

// bareItem reads an integer or decimal, a string, a token, a byte
// sequence, a boolean, a date or a display string.
func (p *parser) bareItem() bool {
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		return p.number(true)
	case c == '"':
		return p.quoted('\\')
	case c == '*' || isAlpha(c):
		for p.i++; isToken(p.peek()); p.i++ {
		}
		return true
	case c == ':':
		for p.i++; isBase64(p.peek()); p.i++ {
		}
		return p.next(':')
	case c == '?':
		p.i++
		return p.next('0') || p.next('1')
	case c == '@':
		p.i++
		return p.number(false)
	case c == '%':
		p.i++
		return p.peek() == '"' && p.quoted('%')
	}
	return false
}

// next reads c, if it is next.
func (p *parser) next(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// number reads an integer (at most 15 digits) or, when decimal allows it,
// a decimal (at most 12 digits, a point, 1 to 3 digits), after an
// optional minus.
func (p *parser) number(decimal bool) bool {
	p.next('-')
	start := p.i
	for isDigit(p.peek()) {
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 15 {
		return false
	}
	if !decimal || !p.next('.') {
		return true
	}
	start = p.i
	for isDigit(p.peek()) {
		p.i++
	}
	return n <= 12 && p.i > start && p.i-start <= 3
}

// quoted reads what is between double quotes, printable ASCII: with
// escape '\\', a string, in which '"' and '\\' are escaped; with escape
// '%', a display string's, in which '%' introduces two lower-case hex
// digits.
func (p *parser) quoted(escape byte) bool {
	p.i++
	for {
		c := p.peek()
		switch {
		case c == '"':
			p.i++
			return true
		case c == escape && escape == '\\':
			p.i++
			if c := p.peek(); c != '"' && c != '\\' {
				return false
			}
		case c == escape:
			p.i++
			if !isLowerHex(p.peek()) {
				return false
			}
			p.i++
			if !isLowerHex(p.peek()) {
				return false
			}
		case c < 0x20 || c > 0x7e:
			return false
		}
		p.i++
	}
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool    { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }
func isKey(c byte) bool {
	return 'a' <= c && c <= 'z' || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*'
}
func isBase64(c byte) bool { return isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=' }

// isToken reports whether c may follow a token's first character: a
// tchar (RFC 9110), ':' or '/'.
func isToken(c byte) bool {
	switch {
	case isAlpha(c), isDigit(c):
		return true
	case c == 0:
		return false
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0
}

// ValidKey reports whether k is a parameter's key: a lower-case letter or
// '*', then lower-case letters, digits, '_', '-', '.' or '*'.
func ValidKey(k string) bool {
	if k == "" || k[0] != '*' && (k[0] < 'a' || k[0] > 'z') {
		return false
	}
	for i := 1; i < len(k); i++ {
		if !isKey(k[i]) {
			return false
		}
	}
	return true
}
