package config

import (
	"maps"
	"net/http"
	"slices"

	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
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
	file   *parse.File
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

// newGeneration builds what data, the contents of the file named name,
// describes, on backend: one limiter of the rules the stacks use, and a
// middleware per stack on it. A rule in several stacks is one rule of the
// limiter: its state, and a leased rule's lease pool, are shared by the
// stacks (two pools would each hold units the other's requests are then
// refused); the stacks share the limiter's breaker too.
func newGeneration(name string, data []byte, backend store.Store, s *settings) (*generation, error) {
	f, err := parse.Read(name, data, slices.Collect(maps.Keys(s.funcs)))
	if err != nil {
		return nil, err
	}
	opts := s.limiterOpts
	if f.Prefix != "" {
		opts = append(opts[:len(opts):len(opts)], limiter.WithPrefix(f.Prefix))
	}
	g := &generation{data: data, file: f, stacks: make(map[string]func(http.Handler) http.Handler, len(f.Stacks))}
	// The rules were checked: an error here is an option's, told at the
	// first stack (a file has one or more).
	if g.lim, err = limiter.New(backend, usedRules(f), opts...); err != nil {
		return nil, f.Stacks[0].Problem(name, err)
	}
	ip, err := keyfunc.ClientIP(f.ClientIP)
	if err != nil {
		ip = keyfunc.IP() // unreachable: client_ip was checked
	}
	hk := httpKeys{ip: ip, funcs: s.funcs}
	for _, st := range f.Stacks {
		if st.Door() != parse.HTTPDoor {
			continue // see Calls and Envoy
		}
		h, err := g.stackMiddleware(st, rulesOf(f, st.Rules, hk), s.middlewareOpts)
		if err != nil {
			g.close()
			return nil, st.Problem(name, err)
		}
		g.stacks[st.Name] = h
		for _, pattern := range st.Match {
			if g.mux == nil {
				g.mux = http.NewServeMux()
			}
			g.mux.Handle(pattern, stackHandler(st.Name)) // checked by parse
		}
	}
	g.envoy = newEnvoy(g)
	return g, nil
}

// usedRules is the limiter's rules of the rules the stacks use, each once,
// in the order they first appear.
func usedRules(f *parse.File) []limiter.Rule {
	byName := make(map[string]*parse.Rule, len(f.Rules))
	for _, r := range f.Rules {
		byName[r.Name] = r
	}
	var used []limiter.Rule
	seen := make(map[string]bool, len(byName))
	for _, st := range f.Stacks {
		for _, name := range st.Rules {
			if !seen[name] {
				seen[name] = true
				used = append(used, byName[name].Limit())
			}
		}
	}
	return used
}

// stackMiddleware is the middleware of stack st, its rules in its order on
// the generation's limiter, with its failure policy and exemptions (the
// file's, unless it has its own) after the program's options.
func (g *generation) stackMiddleware(st *parse.Stack, rules []middleware.Rule, given []middleware.Option) (func(http.Handler) http.Handler, error) {
	opts := given[:len(given):len(given)]
	exempt := st.Exempt
	if exempt == nil {
		exempt = g.file.Exempt
	}
	if g.file.FailsClosed(st) {
		opts = append(opts, middleware.WithFailClosed())
	}
	if len(exempt) > 0 {
		ex, err := middleware.ExemptIPs(g.file.ClientIP, exempt...)
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
