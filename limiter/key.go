package limiter

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/store"
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

// resetSuffix begins the key of the mark a Reset leaves beside a state it
// forgot, followed by the state key's suffix: until the mark expires,
// refunds of decisions made before the Reset into that state are void
// (they would refund into the fresh state).
const resetSuffix = "r"

// resetMark is the key and the TTL of the Reset mark beside stateKey, a
// key of a's state: <prefix>:{<rule>:<identity>}:r<suffix>. Every
// algorithm whose state shares the key shares its mark and its TTL,
// whichever limiter or plan decided.
func resetMark(stateKey store.Key, a *algo) store.Mark {
	mark := stateKey
	mark.Suffix = resetSuffix + stateKey.Suffix
	return store.Mark{Key: mark, TTL: resetTTL(a)}
}

// resetTTL is how long a Reset's mark on a key of a's state lasts: how
// long after a decision a refund into that key can still return
// anything, for every algorithm whose state shares the key. The windows,
// the log and a concurrency limit have in their key what their window
// depends on: twice that window (a sliding window refunds into the
// previous one), at most exact.MaxDuration. The buckets, GCRA and a queue
// keep one key whatever their parameters (Facts.SharedKey), so a Reset
// cannot know how long another parameter set's decisions last:
// exact.MaxDuration, the longest window of any.
func resetTTL(a *algo) time.Duration {
	if a.facts.SharedKey {
		return exact.MaxDuration
	}
	return min(exact.MaxDuration, 2*a.policy.Window)
}

// key is the key of one rule's state for one identity, under an
// algorithm's key suffix.
func (r *rule) key(prefix, identity, suffix string) store.Key {
	return store.Key{Prefix: prefix, Rule: r.name, Identity: encodeIdentity(identity), Suffix: suffix}
}
