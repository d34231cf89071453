package config

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// generation is what one version of the file built: a limiter and a
// middleware per stack. Requests hold the generation they started on
// until they end.
type generation struct {
	data   []byte
	file   *file
	lim    *limiter.Limiter // the stacks' rules; nil without stacks
	stacks map[string]func(http.Handler) http.Handler
	// mux matches requests to the stacks' patterns: each pattern's
	// handler is a stackHandler naming its stack; nil when no stack has
	// patterns.
	mux *http.ServeMux
	// envoy is the Envoy stacks (see Envoy).
	envoy *Envoy
}

// stackHandler stands in mux for the stack it names: what a request
// matches is read from it, never served. A request the mux would answer
// itself (a redirect to a cleaned path or an added slash, a 404 or 405)
// finds another handler, and is not limited.
type stackHandler string

func (stackHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// read parses data, the contents of the file named name, and checks what
// the limiter and the program would refuse of its rules, reporting every
// problem with its position.
func read(name string, data []byte, funcs map[string]keyfunc.KeyFunc) (*file, error) {
	f, err := parse(name, data)
	if f == nil {
		return nil, err
	}
	p := &parser{file: name}
	if err != nil {
		p.errs = append(p.errs, unjoin(err)...)
	}
	for _, r := range f.rules {
		p.unregistered(r.key, funcs)
		p.unregistered(r.altKey, funcs)
		if r.plans != nil {
			p.unregistered(r.plans.by, funcs)
		}
		p.check(r)
	}
	return f, p.err()
}

// check reports what the limiter would refuse of r at the field that
// causes it.
func (p *parser) check(r *rule) {
	if r.name == "" {
		return
	}
	if err := (limiter.Rule{Name: r.name, Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}}).Validate(); err != nil {
		p.bad(r.node, join(r.field, "name"), "1 to 64 bytes of [A-Za-z0-9._-]")
		return
	}
	if r.algorithm == nil {
		return
	}
	lr := r.limit()
	lr.Lease = 0
	if !p.admits(lr, orNode(r.penaltyNode, r.node), join(r.field, "penalty"), fmt.Sprint(r.penalty), nil) {
		return
	}
	p.admits(r.limit(), orNode(r.leaseNode, r.node), join(r.field, "lease"), fmt.Sprint(r.lease), leaseAllowed)
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

// newGeneration builds what data, the contents of the file named name,
// describes, on backend: one limiter of the rules the stacks use, and a
// middleware per stack on it. A rule in several stacks is one rule of the
// limiter: its state, and a leased rule's lease pool, are shared by the
// stacks (two pools would each hold units the other's requests are then
// refused); the stacks share the limiter's breaker too.
func newGeneration(name string, data []byte, backend store.Store, s *settings) (*generation, error) {
	f, err := read(name, data, s.funcs)
	if err != nil {
		return nil, err
	}
	opts := s.limiterOpts
	if f.prefix != "" {
		opts = append(opts[:len(opts):len(opts)], limiter.WithPrefix(f.prefix))
	}
	g := &generation{data: data, file: f, stacks: make(map[string]func(http.Handler) http.Handler, len(f.stacks))}
	stackError := func(st *stack, err error) error {
		return &Problem{File: name, Line: st.node.Line, Column: st.node.Column, Field: st.field, Message: trimConfig(err)}
	}
	// The rules were checked: an error here is an option's, told at the
	// first stack (a file has one or more).
	if g.lim, err = limiter.New(backend, usedRules(f), opts...); err != nil {
		return nil, stackError(f.stacks[0], err)
	}
	ip, err := keyfunc.ClientIP(f.clientIP)
	if err != nil {
		ip = keyfunc.IP() // unreachable: client_ip was checked
	}
	hk := httpKeys{ip: ip, funcs: s.funcs}
	for _, st := range f.stacks {
		if st.door() != httpDoor {
			continue // see Calls and Envoy
		}
		h, err := g.stackMiddleware(st, rulesOf(f, st.rules, hk), s.middlewareOpts)
		if err != nil {
			g.close()
			return nil, stackError(st, err)
		}
		g.stacks[st.name] = h
		for _, pattern := range st.match {
			if g.mux == nil {
				g.mux = http.NewServeMux()
			}
			g.mux.Handle(pattern, stackHandler(st.name)) // checked by parse
		}
	}
	g.envoy = newEnvoy(g)
	return g, nil
}

// usedRules is the limiter's rules of the rules the stacks use, each once,
// in the order they first appear.
func usedRules(f *file) []limiter.Rule {
	byName := make(map[string]*rule, len(f.rules))
	for _, r := range f.rules {
		byName[r.name] = r
	}
	var used []limiter.Rule
	seen := make(map[string]bool, len(byName))
	for _, st := range f.stacks {
		for _, name := range st.rules {
			if !seen[name] {
				seen[name] = true
				used = append(used, byName[name].limit())
			}
		}
	}
	return used
}

// failsClosed reports whether stack st fails closed: its own policy, else
// the file's.
func (f *file) failsClosed(st *stack) bool {
	if st.failure != "" {
		return st.failure == "closed"
	}
	return f.failure == "closed"
}

// stackMiddleware is the middleware of stack st, its rules in its order on
// the generation's limiter, with its failure policy and exemptions (the
// file's, unless it has its own) after the program's options.
func (g *generation) stackMiddleware(st *stack, rules []middleware.Rule, given []middleware.Option) (func(http.Handler) http.Handler, error) {
	opts := given[:len(given):len(given)]
	exempt := st.exempt
	if exempt == nil {
		exempt = g.file.exempt
	}
	if g.file.failsClosed(st) {
		opts = append(opts, middleware.WithFailClosed())
	}
	if len(exempt) > 0 {
		ex, err := middleware.ExemptIPs(g.file.clientIP, exempt...)
		if err != nil {
			return nil, err
		}
		opts = append(opts, middleware.WithExempt(ex))
	}
	return middleware.NewWithLimiter(g.lim, rules, opts...)
}

// close closes the generation's limiter, which gives back the units of its
// leases.
func (g *generation) close() error {
	if g.lim == nil {
		return nil
	}
	return g.lim.Close()
}

// stackFor is the stack whose pattern r matches, or "" (also when the mux
// would only redirect r: see stackHandler).
func (g *generation) stackFor(r *http.Request) (stack, pattern string) {
	if g.mux == nil {
		return "", ""
	}
	h, pattern := g.mux.Handler(r)
	if s, ok := h.(stackHandler); ok {
		return string(s), pattern
	}
	return "", ""
}
