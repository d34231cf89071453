// Package keypart checks and encodes the parts of a key that a Limiter
// writes from its callers' input: rule names, which must be safe as they
// are, and identities, which are untrusted and kept verbatim only when
// they are short and cannot end a Redis Cluster hash tag; any other is
// hashed (see "Keys" in package limiter's doc).
package keypart

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxRawIdentity is the longest identity kept verbatim in a key.
const MaxRawIdentity = 64

// maxRuleName is the longest rule name.
const maxRuleName = 64

// ruleNameBytes and identityBytes are the bytes a rule name and a verbatim
// identity may hold: none that can end a hash tag or begin a hashed form.
var ruleNameBytes, identityBytes = bytesOf("._-"), bytesOf("._-:@/+=")

// bytesOf is the set of ASCII letters and digits and the bytes of extra.
func bytesOf(extra string) (set [256]bool) {
	for c := range 256 {
		set[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := range len(extra) {
		set[extra[i]] = true
	}
	return set
}

// allIn reports whether every byte of s is in set.
func allIn(s string, set *[256]bool) bool {
	for i := range len(s) {
		if !set[s[i]] {
			return false
		}
	}
	return true
}

// Identity returns id itself when it is safe in a key (at most
// MaxRawIdentity bytes of letters, digits and ._-:@/+=), else "#" and the
// hex of the first 16 bytes of its SHA-256 ('#' never occurs in a safe
// identity).
func Identity(id string) string {
	if len(id) <= MaxRawIdentity && allIn(id, &identityBytes) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "#" + hex.EncodeToString(sum[:16])
}

// ValidRuleName reports whether name is 1 to 64 bytes of [A-Za-z0-9._-].
func ValidRuleName(name string) bool {
	return name != "" && len(name) <= maxRuleName && allIn(name, &ruleNameBytes)
}
