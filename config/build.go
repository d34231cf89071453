package config

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
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
}

// stackHandler stands in mux for the stack it names: what a request
// matches is read from it, never served. A request the mux would answer
// itself (a redirect to a cleaned path or an added slash, a 404 or 405)
// finds another handler, and is not limited.
type stackHandler string

func (stackHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// read parses data, the contents of the file named name, and builds its
// rules as middleware rules, reporting every problem with its position.
func read(name string, data []byte, funcs map[string]keyfunc.KeyFunc) (*file, []middleware.Rule, error) {
	f, err := parse(name, data)
	if f == nil {
		return nil, nil, err
	}
	p := &parser{file: name}
	if err != nil {
		p.errs = append(p.errs, unjoin(err)...)
	}
	ip, err := keyfunc.ClientIP(f.clientIP)
	if err != nil {
		ip = keyfunc.IP() // client_ip's problems are reported already
	}
	rules := make([]middleware.Rule, len(f.rules))
	for i, r := range f.rules {
		rules[i] = p.build(r, ip, funcs)
	}
	return f, rules, p.err()
}

// build makes r's middleware rule, reporting what the limiter would refuse
// at the field that causes it.
func (p *parser) build(r *rule, ip keyfunc.KeyFunc, funcs map[string]keyfunc.KeyFunc) middleware.Rule {
	mr := middleware.Rule{Rule: limiter.Rule{Name: r.name, Algorithm: r.algorithm, Blockable: r.blockable, Penalty: r.penalty, Lease: r.lease, Shadow: r.shadow}, Optional: r.optional}
	if r.key != nil {
		mr.Key = p.keyFunc(r.key, ip, funcs)
	}
	if r.altKey != nil {
		mr.AltKey = p.keyFunc(r.altKey, ip, funcs)
	}
	if r.plans != nil && r.plans.by != nil {
		mr.Plan = p.plan(r.plans, funcs)
	}
	if r.name == "" {
		return mr
	}
	if _, err := limiter.New(noStore{}, []limiter.Rule{{Name: r.name, Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}}}); err != nil {
		p.bad(r.node, join(r.field, "name"), "1 to 64 bytes of [A-Za-z0-9._-]")
		return mr
	}
	if r.algorithm == nil {
		return mr
	}
	lr := guard.Limits([]middleware.Rule{mr})[0]
	lease := lr.Lease
	lr.Lease = 0
	if !p.admits(lr, orNode(r.penaltyNode, r.node), join(r.field, "penalty"), fmt.Sprint(r.penalty), nil) {
		return mr
	}
	lr.Lease = lease
	p.admits(lr, orNode(r.leaseNode, r.node), join(r.field, "lease"), fmt.Sprint(r.lease), leaseAllowed)
	return mr
}

// admits reports whether the limiter accepts lr, recording its complaint
// at field (whose value is shown as found) when it does not, followed by
// what allowed, when given, says is allowed.
func (p *parser) admits(lr limiter.Rule, n *yaml.Node, field, found string, allowed func(limiter.Rule) string) bool {
	lim, err := limiter.New(noStore{}, []limiter.Rule{lr})
	if err != nil {
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
	_ = lim.Close() // stops a leased rule's sweeper; nothing was taken
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

// noStore is the store rules are checked against: limiter.New validates
// without calling it.
type noStore struct{}

var errNoStore = errors.New("ratelimit: a store for validation only")

func (noStore) Decide(context.Context, time.Time, []store.Check, []store.Result) (store.Verdict, error) {
	return store.Verdict{}, errNoStore
}

func (noStore) Refund(context.Context, time.Time, time.Time, []store.Refund) error { return errNoStore }

func (noStore) Block(context.Context, time.Time, store.Key, time.Duration) error { return errNoStore }

func (noStore) Reset(context.Context, time.Time, []store.Key, []store.Mark) (int, error) {
	return 0, errNoStore
}

// newGeneration builds what data, the contents of the file named name,
// describes, on backend: one limiter of the rules the stacks use, and a
// middleware per stack on it. A rule in several stacks is one rule of the
// limiter: its state, and a leased rule's lease pool, are shared by the
// stacks (two pools would each hold units the other's requests are then
// refused); the stacks share the limiter's breaker too.
func newGeneration(name string, data []byte, backend store.Store, s *settings) (*generation, error) {
	f, rules, err := read(name, data, s.funcs)
	if err != nil {
		return nil, err
	}
	opts := s.limiterOpts
	if f.prefix != "" {
		opts = append(opts[:len(opts):len(opts)], limiter.WithPrefix(f.prefix))
	}
	g := &generation{data: data, file: f, stacks: make(map[string]func(http.Handler) http.Handler, len(f.stacks))}
	byName := make(map[string]middleware.Rule, len(rules))
	for _, r := range rules {
		byName[r.Name] = r
	}
	stackError := func(st *stack, err error) error {
		return &Problem{File: name, Line: st.node.Line, Column: st.node.Column, Field: st.field, Message: trimConfig(err)}
	}
	if len(f.stacks) > 0 { // the rules were checked: an error here is an option's, told at the first stack
		if g.lim, err = limiter.New(backend, guard.Limits(usedRules(f.stacks, byName)), opts...); err != nil {
			return nil, stackError(f.stacks[0], err)
		}
	}
	for _, st := range f.stacks {
		h, err := g.stackMiddleware(st, byName, s.middlewareOpts)
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
	return g, nil
}

// usedRules is the rules the stacks use, each once, in the order they
// first appear.
func usedRules(stacks []*stack, byName map[string]middleware.Rule) []middleware.Rule {
	var used []middleware.Rule
	seen := make(map[string]bool, len(byName))
	for _, st := range stacks {
		for _, name := range st.rules {
			if !seen[name] {
				seen[name] = true
				used = append(used, byName[name])
			}
		}
	}
	return used
}

// stackMiddleware is the middleware of stack st, its rules in its order on
// the generation's limiter, with its failure policy and exemptions (the
// file's, unless it has its own) after the program's options.
func (g *generation) stackMiddleware(st *stack, byName map[string]middleware.Rule, given []middleware.Option) (func(http.Handler) http.Handler, error) {
	rules := make([]middleware.Rule, len(st.rules))
	for i, name := range st.rules {
		rules[i] = byName[name]
	}
	opts := given[:len(given):len(given)]
	failure, exempt := st.failure, st.exempt
	if failure == "" {
		failure = g.file.failure
	}
	if exempt == nil {
		exempt = g.file.exempt
	}
	if failure == "closed" {
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
