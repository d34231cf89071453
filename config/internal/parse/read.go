package parse

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Read parses data, the contents of the file named name, and checks what
// the limiter and the program would refuse of its rules (funcs are the
// names of the key functions the program registers), reporting every
// problem with its position, joined in the order of their lines, and what
// it could read despite them (nil when not even the document could be
// read).
func Read(name string, data []byte, funcs []string) (*File, error) {
	f, err := parse(name, data)
	if f == nil {
		return nil, err
	}
	p := &parser{file: name}
	if err != nil {
		p.errs = append(p.errs, unjoin(err)...)
	}
	for _, r := range f.Rules {
		p.unregistered(r.Key, funcs)
		p.unregistered(r.AltKey, funcs)
		if r.Plans != nil {
			p.unregistered(r.Plans.By, funcs)
		}
		p.check(r)
	}
	return f, p.err()
}

// check reports what the limiter would refuse of r at the field that
// causes it.
func (p *parser) check(r *Rule) {
	if r.Name == "" {
		return
	}
	if err := (limiter.Rule{Name: r.Name, Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}}).Validate(); err != nil {
		p.bad(r.node, join(r.field, "name"), "1 to 64 bytes of [A-Za-z0-9._-]")
		return
	}
	if r.Algorithm == nil {
		return
	}
	lr := r.Limit()
	lr.Lease = 0
	if !p.admits(lr, orNode(r.penaltyNode, r.node), join(r.field, "penalty"), fmt.Sprint(r.Penalty), nil) {
		return
	}
	p.admits(r.Limit(), orNode(r.leaseNode, r.node), join(r.field, "lease"), fmt.Sprint(r.Lease), leaseAllowed)
}

// admits reports whether the limiter accepts lr, recording its complaint
// at field (whose value is shown as found) when it does not, followed by
// what allowed, when given, says is allowed.
func (p *parser) admits(lr limiter.Rule, n *yaml.Node, field, found string, allowed func(limiter.Rule) string) bool {
	if err := lr.Validate(); err != nil {
		msg := trimConfig(err)
		msg = strings.TrimPrefix(msg, "rule "+strconv.Quote(lr.Name)+": ")
		if allowed != nil {
			if a := allowed(lr); a != "" {
				msg += "; allowed: " + a
			}
		}
		p.fail(n, field, "found %q: %s", found, msg)
		return false
	}
	return true
}

// unjoin is the errors joined in err.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// trimConfig is err's message without the ErrConfig prefix.
func trimConfig(err error) string {
	return strings.TrimPrefix(err.Error(), ratelimit.ErrConfig.Error()+": ")
}

// orNode is n, or def when n is nil.
func orNode(n, def *yaml.Node) *yaml.Node {
	if n == nil {
		return def
	}
	return n
}

// Limit is r's limiter rule.
func (r *Rule) Limit() limiter.Rule {
	return limiter.Rule{Name: r.Name, Algorithm: r.Algorithm, Blockable: r.Blockable, Penalty: r.Penalty, Lease: r.Lease, Shadow: r.Shadow}
}

// FailsClosed reports whether stack st fails closed: its own policy, else
// the file's.
func (f *File) FailsClosed(st *Stack) bool {
	if st.Failure != "" {
		return st.Failure == "closed"
	}
	return f.Failure == "closed"
}
