package compile

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/internal/clientip"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// altKeyPrefix begins an operator's identity that names a client a rule
// counts by its alt_key rather than its key.
const altKeyPrefix = "alt_key:"

// Identity is the identity under which rule r keeps the client an
// operator names by raw, the value the operator knows, read as r's key
// reads a request: a header's, metadata's or descriptor's value is hashed
// (keyfunc.Hash), a binary ("-bin") metadata key's as the bytes of the
// base64 the client sends; an
// address ("2001:db8::1", "192.0.2.7") is masked to the file's client_ip
// prefix lengths (an IPv6 address names its /64 by default); a join's
// parts are separated by "|" ("192.0.2.7|alice"; a "|" or "\" inside a
// part escaped by "\"), each read as its own kind; a constant is its
// value; a route, a gRPC method, a form field and a registered
// function's identity are taken as given. "alt_key:" followed by the value names a client the
// rule counts by its alt_key.
func (v *Version) Identity(r *parse.Rule, raw string) (string, error) {
	k := r.Key
	if alt, ok := strings.CutPrefix(raw, altKeyPrefix); ok && r.AltKey != nil {
		k, raw = r.AltKey, alt
	}
	return v.identity(k, raw)
}

// identity is raw read as key k reads a request (see Identity).
func (v *Version) identity(k *parse.Key, raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("an empty identity for %s", k)
	}
	switch k.Kind {
	case "ip":
		res, err := clientip.New(nil, "", v.File.ClientIP.IPv4PrefixLen, v.File.ClientIP.IPv6PrefixLen)
		if err != nil {
			return "", err
		}
		id, err := res.KeyOf(raw)
		if err != nil { // its error quotes raw, which may be any secret pasted against the wrong rule
			return "", fmt.Errorf("not an IP address, keyed by %s; allowed: an address (192.0.2.7, 2001:db8::1)", k)
		}
		return id, nil
	case "metadata":
		if strings.HasSuffix(strings.ToLower(k.Arg), "-bin") {
			b, ok := binaryValue(raw)
			if !ok {
				return "", fmt.Errorf("found a value that is not base64, keyed by %s, a binary key: its value as the client sends it, in base64", k)
			}
			raw = string(b)
		}
		return keyfunc.Hash(raw), nil
	case "header", "descriptor":
		return keyfunc.Hash(raw), nil
	case "constant":
		if raw != k.Arg {
			return "", fmt.Errorf("found another value, keyed by %s: the identity is %q", k, k.Arg)
		}
		return raw, nil
	case "join":
		parts := splitJoined(raw)
		if len(parts) != len(k.Parts) {
			return "", fmt.Errorf("found %d parts separated by \"|\", keyed by %s: %d parts", len(parts), k, len(k.Parts))
		}
		fns := make([]keyfunc.KeyFunc, len(parts))
		for i, part := range k.Parts {
			id, err := v.identity(part, parts[i])
			if err != nil {
				return "", err
			}
			fns[i] = keyfunc.Constant(id)
		}
		return keyfunc.Join(fns...)(nil) // joined and escaped as the rule's key joins them
	}
	return raw, nil
}

// binaryValue is the bytes of a binary ("-bin") metadata value as a
// client sends it, base64 with or without padding, decoded as gRPC
// decodes it before a call's key reads it.
func binaryValue(s string) ([]byte, bool) {
	enc := base64.RawStdEncoding
	if len(s)%4 == 0 {
		enc = base64.StdEncoding
	}
	b, err := enc.DecodeString(s)
	return b, err == nil
}

// splitJoined splits s at each "|" that no "\" escapes, unescaping the
// parts: the inverse of keyfunc.Join's encoding.
func splitJoined(s string) []string {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '|':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(parts, b.String())
}
