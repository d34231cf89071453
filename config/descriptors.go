package config

import (
	"github.com/seed-bff0c9e1/ratelimit/config/internal/compile"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Envoy is the Envoy stacks (those with a domain) of one version of a
// file, which package rls serves (rls.FromFile): each stack decides the
// descriptors of its domain on the file's limiter, which its HTTP and
// gRPC stacks share, so a rule in an Envoy and an HTTP stack keeps one
// count. It is safe for concurrent use.
type Envoy struct {
	v *compile.Version
}

// Envoy is the Envoy stacks of the rules in force: ask for them per
// request, as a reload replaces them.
func (l *Limits) Envoy() *Envoy {
	return &l.cur.Load().envoy
}

// Limiter is the limiter the stacks' rules are decided on.
func (e *Envoy) Limiter() *limiter.Limiter {
	return e.v.Lim
}

// Descriptor matches a descriptor of an RLS request of domain, its
// entries' keys and values in order, to the rule of the domain's stack
// whose key reads exactly those keys, in that order ({descriptor: KEY},
// ip for remote_address, a join of them): rule is that rule, and check
// its check of the descriptor, by the identity of the values (hashed, an
// address masked as the file's client_ip says) and the plan they choose
// (nil: the rule's algorithm), Cost left to the caller. A descriptor no
// rule matches is not limited: check.Rule is "". An error wrapping
// ratelimit.ErrNoKey is a descriptor whose values have no identity (a
// remote_address that is not an address).
func (e *Envoy) Descriptor(domain string, keys, values []string) (check limiter.Check, rule limiter.Rule, err error) {
	return e.v.Descriptor(domain, keys, values)
}

// String is the file in force as config.Check prints it.
func (e *Envoy) String() string {
	return e.v.File.String()
}
