package store

// Key names a state a store keeps: one rule's, for one identity, under a
// limiter's prefix, and which of the rule's states (its algorithm's, its
// blocks, a Reset's mark). The Limiter builds it from parts it already
// holds, so naming a state allocates nothing; a store that needs one
// string builds it with String, and the memstore finds its state by the
// Key itself.
type Key struct {
	// Prefix is the limiter's (limiter.WithPrefix).
	Prefix string
	// Rule is the rule's name; Identity the identity, encoded (see the
	// limiter package's Keys). Together they are the Redis Cluster hash
	// tag: every state of one rule and identity is on one slot.
	Rule, Identity string
	// Suffix says which state: the algorithm's code and the parameters its
	// state depends on, "b" for blocks, "r" and the state's suffix for a
	// Reset's mark.
	Suffix string
}

// String is the key's name on Redis:
// <prefix>:{<rule>:<identity>}:<suffix>.
func (k Key) String() string {
	return k.Prefix + ":{" + k.Rule + ":" + k.Identity + "}:" + k.Suffix
}
