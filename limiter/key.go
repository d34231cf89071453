package limiter

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxRawIdentity is the longest identity kept verbatim in a key.
const maxRawIdentity = 64

// safeIdentity reports whether id can appear verbatim in a key: short, and
// made only of bytes that cannot end a hash tag or begin a hashed form.
func safeIdentity(id string) bool {
	if len(id) > maxRawIdentity {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == ':', c == '@', c == '/', c == '+', c == '=', c == '-':
		default:
			return false
		}
	}
	return true
}

// encodeIdentity returns id itself when it is safe, else "#" and the hex of
// the first 16 bytes of its SHA-256 ('#' never occurs in a safe identity).
func encodeIdentity(id string) string {
	if safeIdentity(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "#" + hex.EncodeToString(sum[:16])
}

// validRuleName reports whether name is 1 to 64 bytes of [A-Za-z0-9._-].
func validRuleName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// blockSuffix ends the key of a rule's block for an identity, beside its
// state keys (whose suffixes begin with an algorithm's code).
const blockSuffix = "b"

// key is the Redis key of one rule's state for one identity, under an
// algorithm's key suffix.
func (r *rule) key(prefix, identity, suffix string) string {
	return prefix + ":{" + r.name + ":" + encodeIdentity(identity) + "}:" + suffix
}
