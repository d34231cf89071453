package compile

import (
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/clientip"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// envoyStacks are the rules of the Envoy stacks (those with a domain) of
// a version, by domain, then by the signature of the descriptor keys
// they read.
type envoyStacks map[string]map[string]guard.Rule[entries]

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

// newEnvoyStacks are the Envoy stacks of f.
func newEnvoyStacks(f *parse.File) envoyStacks {
	e := envoyStacks{}
	k := envoyKeys{ip: f.ClientIP, at: map[*parse.Key]int{}}
	sigs := map[string]string{} // by rule name
	for _, r := range f.Rules {
		if r.Key != nil && r.Key.Doors()&parse.EnvoyDoor != 0 {
			sigs[r.Name] = parse.Signature(r.Key.EntryKeys())
			k.number(r.Key, 0)
		}
	}
	for _, st := range f.Stacks {
		if st.Door() != parse.EnvoyDoor {
			continue
		}
		byKeys := map[string]guard.Rule[entries]{}
		for i, r := range rulesOf(f, st.Rules, k) {
			byKeys[sigs[st.Rules[i]]] = r
		}
		e[st.Domain] = byKeys
	}
	return e
}

// Descriptor matches a descriptor of an RLS request of domain, its
// entries' keys and values in order, to the rule of the domain's Envoy
// stack whose key reads exactly those keys, in that order, and gives the
// rule's check of it (see config.Envoy.Descriptor).
func (v *Version) Descriptor(domain string, keys, values []string) (check limiter.Check, rule limiter.Rule, err error) {
	r, ok := v.envoy[domain][parse.Signature(keys)]
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
		res, err := clientip.New(nil, "", k.ip.IPv4PrefixLen, k.ip.IPv6PrefixLen)
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
