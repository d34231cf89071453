package limiter

import (
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/keypart"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// blockSuffix ends the key of a rule's block for an identity, beside its
// state keys (whose suffixes begin with an algorithm's code).
const blockSuffix = "b"

// resetSuffix begins the key of the mark a Reset leaves beside a state it
// forgot, followed by the state key's suffix: until the mark expires,
// refunds of decisions made before the Reset into that state are void
// (they would refund into the fresh state).
const resetSuffix = "r"

// resetMark is the key and the TTL of the Reset mark beside stateKey, a
// key of a's state: <prefix>:{<rule>:<identity>}:r<suffix>, lasting as
// long after a decision as a refund into that key can still return
// anything: twice the window (a sliding window refunds into the previous
// one), at most exact.MaxDuration. The windows, the log and a
// concurrency limit have in their key what their window depends on, so
// every algorithm whose state shares the key shares its mark and its TTL,
// whichever limiter or plan decided. The buckets, GCRA and a queue need
// none (the zero Mark): the state a Reset forgot is of an epoch of its
// own (Facts.Epochs), which no later state has, since the limiter gives
// each of their decisions an id.
func resetMark(stateKey store.Key, a *algo) store.Mark {
	if a.facts.Epochs {
		return store.Mark{}
	}
	mark := stateKey
	mark.Suffix = resetSuffix + stateKey.Suffix
	return store.Mark{Key: mark, TTL: min(exact.MaxDuration, 2*a.policy.Window)}
}

// key is the key of one rule's state for one identity, under an
// algorithm's key suffix.
func (r *rule) key(prefix, identity, suffix string) store.Key {
	return store.Key{Prefix: prefix, Rule: r.name, Identity: keypart.Identity(identity), Suffix: suffix}
}
