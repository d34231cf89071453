package config

import (
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/clientip"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Envoy is the Envoy stacks (those with a domain) of one version of a
// file, which package rls serves (rls.FromFile): each stack decides the
// descriptors of its domain on the file's limiter, which its HTTP and
// gRPC stacks share, so a rule in an Envoy and an HTTP stack keeps one
// count. It is safe for concurrent use.
type Envoy struct {
	gen *generation
	// domains are the stacks' rules by domain, then by the signature of
	// the descriptor keys they read.
	domains map[string]map[string]guard.Rule[entries]
}

// entries are a descriptor's entries, as an Envoy stack's rules read
// them.
type entries struct{ keys, values []string }

// value is the value of the first entry whose key is key, or "".
func (e entries) value(key string) string {
	for i, k := range e.keys {
		if k == key {
			return e.values[i]
		}
	}
	return ""
}

// newEnvoy is the Envoy stacks of g.
func newEnvoy(g *generation) *Envoy {
	e := &Envoy{gen: g, domains: map[string]map[string]guard.Rule[entries]{}}
	k := envoyKeys{ip: g.file.ClientIP, at: map[*parse.Key]int{}}
	sigs := map[string]string{} // by rule name
	for _, r := range g.file.Rules {
		if r.Key != nil && r.Key.Doors()&parse.EnvoyDoor != 0 {
			sigs[r.Name] = parse.Signature(r.Key.EntryKeys())
			k.number(r.Key, 0)
		}
	}
	for _, st := range g.file.Stacks {
		if st.Door() != parse.EnvoyDoor {
			continue
		}
		byKeys := map[string]guard.Rule[entries]{}
		for i, r := range rulesOf(g.file, st.Rules, k) {
			byKeys[sigs[st.Rules[i]]] = r
		}
		e.domains[st.Domain] = byKeys
	}
	return e
}

// Envoy is the Envoy stacks of the rules in force: ask for them per
// request, as a reload replaces them.
func (l *Limits) Envoy() *Envoy {
	return l.cur.Load().envoy
}

// Limiter is the limiter the stacks' rules are decided on.
func (e *Envoy) Limiter() *limiter.Limiter {
	return e.gen.lim
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
	r, ok := e.domains[domain][parse.Signature(keys)]
	if !ok || len(keys) != len(values) {
		return check, rule, nil
	}
	d := entries{keys: keys, values: values}
	id, err := r.Identity(d)
	if err != nil {
		return check, rule, err
	}
	check = limiter.Check{Rule: r.Name, Identity: id}
	if r.Plan != nil {
		check.Plan = r.Plan(d)
	}
	return check, r.Rule, nil
}

// String is the file in force as config.Check prints it.
func (e *Envoy) String() string {
	return e.gen.file.String()
}

// envoyKeys builds identities of descriptors, whose entries' keys are
// those of the rule's key (Descriptor matched them): each part of a key
// reads the entry at its place.
type envoyKeys struct {
	ip keyfunc.IPConfig // the file's client_ip: its prefix lengths
	// at is the place of each descriptor and ip part of the rules' keys
	// among the entries they read.
	at map[*parse.Key]int
}

// number records the places of spec's parts, from i on; it returns the
// place after them.
func (k envoyKeys) number(spec *parse.Key, i int) int {
	if spec.Kind != "join" {
		k.at[spec] = i
		return i + 1
	}
	for _, part := range spec.Parts {
		i = k.number(part, i)
	}
	return i
}

func (k envoyKeys) key(spec *parse.Key) func(entries) (string, error) {
	i := k.at[spec]
	if spec.Kind == "ip" {
		res, err := clientip.New(nil, k.ip.IPv4PrefixLen, k.ip.IPv6PrefixLen)
		if err != nil { // unreachable: client_ip was checked
			return func(entries) (string, error) { return "", err }
		}
		return func(d entries) (string, error) {
			if id, err := res.KeyOf(d.values[i]); err == nil {
				return id, nil
			}
			return "", &missing{"address in descriptor entry " + parse.RemoteAddress}
		}
	}
	return func(d entries) (string, error) { // descriptor: the parser allows no other kind on Envoy stacks
		return keyfunc.Hash(d.values[i]), nil
	}
}

// attr is the value of the entry of the plans' descriptor key (one the
// rule's key reads: the parser checked it).
func (k envoyKeys) attr(spec *parse.Key) func(entries) string {
	return func(d entries) string { return d.value(spec.Arg) }
}
