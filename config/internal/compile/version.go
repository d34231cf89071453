package compile

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

// Version is what one version of the file built: a limiter and a
// middleware per HTTP stack, and the Envoy stacks' rules (the gRPC stacks
// are built on it by NewCalls). Requests hold the version they started
// on until they end; nothing of it changes once built.
type Version struct {
	Data []byte           // the file's contents
	File *parse.File      // the file as read
	Lim  *limiter.Limiter // the stacks' rules
	// HTTP are the middlewares of the HTTP stacks, by name.
	HTTP map[string]func(http.Handler) http.Handler
	// mux matches requests to the stacks' patterns: each pattern's
	// handler is a stackHandler naming its stack; nil when no stack has
	// patterns.
	mux *http.ServeMux
	// envoy are the Envoy stacks' rules (see Descriptor).
	envoy envoyStacks
}

// Settings are what the program adds to the file.
type Settings struct {
	LimiterOpts    []limiter.Option           // before the file's prefix
	MiddlewareOpts []middleware.Option        // before each stack's failure policy and exemptions
	Funcs          map[string]keyfunc.KeyFunc // the key functions a file names as {func: name}, by name
}

// stackHandler stands in mux for the stack it names: what a request
// matches is read from it, never served. A request the mux would answer
// itself (a redirect to a cleaned path or an added slash, a 404 or 405)
// finds another handler, and is not limited.
type stackHandler string

func (stackHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// New builds what data, the contents of the file named name,
// describes, on backend: one limiter of the rules the stacks use, and a
// middleware per stack on it. A rule in several stacks is one rule of the
// limiter: its state, and a leased rule's lease pool, are shared by the
// stacks (two pools would each hold units the other's requests are then
// refused); the stacks share the limiter's breaker too.
//
// A file with problems, or stacks the limiter or the middleware refuses,
// is an error listing every problem (see parse.Read).
func New(name string, data []byte, backend store.Store, s *Settings) (*Version, error) {
	f, err := parse.Read(name, data, slices.Collect(maps.Keys(s.Funcs)))
	if err != nil {
		return nil, err
	}
	opts := s.LimiterOpts
	if f.Prefix != "" {
		opts = append(opts[:len(opts):len(opts)], limiter.WithPrefix(f.Prefix))
	}
	v := &Version{Data: data, File: f, HTTP: make(map[string]func(http.Handler) http.Handler, len(f.Stacks))}
	// The rules were checked: an error here is an option's, told at the
	// first stack (a file has one or more).
	if v.Lim, err = limiter.New(backend, usedRules(f), opts...); err != nil {
		return nil, f.Stacks[0].Problem(name, err)
	}
	ip, err := keyfunc.ClientIP(f.ClientIP)
	if err != nil {
		ip = keyfunc.IP() // unreachable: client_ip was checked
	}
	hk := httpKeys{ip: ip, funcs: s.Funcs}
	for _, st := range f.Stacks {
		if st.Door() != parse.HTTPDoor {
			continue // see NewCalls and Descriptor
		}
		h, err := v.stackMiddleware(st, rulesOf(f, st.Rules, hk), s.MiddlewareOpts)
		if err != nil {
			_ = v.Close()
			return nil, st.Problem(name, err)
		}
		v.HTTP[st.Name] = h
		for _, pattern := range st.Match {
			if v.mux == nil {
				v.mux = http.NewServeMux()
			}
			v.mux.Handle(pattern, stackHandler(st.Name)) // checked by parse
		}
	}
	v.envoy = newEnvoyStacks(f)
	return v, nil
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
// the version's limiter, with its failure policy and exemptions (the
// file's, unless it has its own) after the program's options.
func (v *Version) stackMiddleware(st *parse.Stack, rules []middleware.Rule, given []middleware.Option) (func(http.Handler) http.Handler, error) {
	opts := given[:len(given):len(given)]
	exempt := st.Exempt
	if exempt == nil {
		exempt = v.File.Exempt
	}
	if v.File.FailsClosed(st) {
		opts = append(opts, middleware.WithFailClosed())
	}
	if len(exempt) > 0 {
		ex, err := middleware.ExemptIPs(v.File.ClientIP, exempt...)
		if err != nil {
			return nil, err
		}
		opts = append(opts, middleware.WithExempt(ex))
	}
	return middleware.NewWithLimiter(v.Lim, rules, opts...)
}

// Close closes the version's limiter, which gives back the units of its
// leases.
func (v *Version) Close() error {
	if v.Lim == nil {
		return nil
	}
	return v.Lim.Close()
}

// StackFor is the HTTP stack whose pattern r matches, and the pattern, or
// "" (also when the mux would only redirect r: see stackHandler).
func (v *Version) StackFor(r *http.Request) (stack, pattern string) {
	if v.mux == nil {
		return "", ""
	}
	h, pattern := v.mux.Handler(r)
	if s, ok := h.(stackHandler); ok {
		return string(s), pattern
	}
	return "", ""
}
