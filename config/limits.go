package config

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/compile"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Limits are the rules of a file, in force: middlewares by stack name
// (Middleware) and by ServeMux pattern (Handler), replaced as a whole when
// the file changes (Reload, Watch). It is safe for concurrent use.
type Limits struct {
	path  string
	store store.Store
	set   settings

	cur atomic.Pointer[generation]

	mu      sync.Mutex // serializes reloads and wiring
	wired   map[string]bool
	seen    fingerprint // the file as Watch last read it
	unread  fingerprint // a version Watch could not read, reported once
	failing bool        // the last reload reported failed
	pending []error     // reloads to report to the hook once l.mu is released, in order
	hooking bool        // a goroutine is handing pending to the hook
	closed  bool
	done    chan struct{} // closed by Close: Watch returns
}

// settings are what the program adds to the file: what the stacks are
// built with, and the reload hook.
type settings struct {
	compile.Settings
	onReload func(error)
}

// generation is a version of the file in force: what package compile made
// of it, and its Envoy stacks as Limits.Envoy gives them.
type generation struct {
	*compile.Version
	envoy Envoy
}

// newGeneration builds data, the contents of the file named name, on
// backend, with the program's settings s.
func newGeneration(name string, data []byte, backend store.Store, s *settings) (*generation, error) {
	v, err := compile.New(name, data, backend, &s.Settings)
	if err != nil {
		return nil, err
	}
	return &generation{Version: v, envoy: Envoy{v: v}}, nil
}

// Option configures Load.
type Option func(*settings)

// WithLimiterOptions passes opts to every limiter the file's rules are
// built on (a fallback store, the deny cache; limiter.WithPrefix, unless
// the file sets its own prefix).
func WithLimiterOptions(opts ...limiter.Option) Option {
	return func(s *settings) { s.LimiterOpts = append(s.LimiterOpts, opts...) }
}

// WithMiddlewareOptions passes opts to every stack's middleware (a hook
// for metrics, the error and deny handlers, header names), before the
// stack's own failure policy and exemptions.
func WithMiddlewareOptions(opts ...middleware.Option) Option {
	return func(s *settings) { s.MiddlewareOpts = append(s.MiddlewareOpts, opts...) }
}

// WithKeyFunc makes fn the identity a rule of the file names as
// {func: name}, and the attribute of plans with func: name: what only the
// program knows, such as an authenticated user (keyfunc.Context).
func WithKeyFunc(name string, fn keyfunc.KeyFunc) Option {
	return func(s *settings) {
		if s.Funcs == nil {
			s.Funcs = map[string]keyfunc.KeyFunc{}
		}
		s.Funcs[name] = fn
	}
}

// WithReloadHook calls fn after every reload that read a changed file
// (Reload, or Watch's): with nil when the new rules are in force, or the
// error that left the old ones in force. For metrics: count both. fn is
// called for one reload at a time, in the order of the reloads: a reload
// made while fn runs for another returns without waiting, and fn hears
// it once the call under way has returned. Reload calls fn before it
// returns (unless fn is under way for another reload); Watch calls it on
// a goroutine of its own, so that an fn that blocks holds up neither
// Watch, which goes on reloading and returns at Close, nor Close, which
// does not wait for fn. A panic in fn is recovered and logged with
// slog.Default() (the value's type and the stack, not the value), and fn
// hears the next reloads.
func WithReloadHook(fn func(err error)) Option {
	return func(s *settings) { s.onReload = fn }
}

// errClosed is returned by Reload after Close. It wraps fs.ErrClosed, as
// an operation on a closed file does, so that a caller tells it apart
// with errors.Is and the root module exports no name for it.
var errClosed = fmt.Errorf("ratelimit: Reload after Close: %w", fs.ErrClosed)

// Load reads the rules file at path (YAML, or JSON, one schema: see
// docs/config.md) and builds its rules on store (a redisstore.New, or
// memstore.Must()). A file with problems is an error wrapping
// ratelimit.ErrConfig that lists every one, each with the file, line and
// column, the field, what was found and what is allowed.
//
// The Limits keep the file's path: Reload, or Watch, reads it again.
// Close them once the server has stopped serving, to give back the units
// of leased rules.
func Load(path string, backend store.Store, opts ...Option) (*Limits, error) {
	if backend == nil {
		return nil, fmt.Errorf("%w: nil store", ratelimit.ErrConfig)
	}
	l := &Limits{path: path, store: backend, wired: map[string]bool{}, done: make(chan struct{})}
	for _, opt := range opts {
		opt(&l.set)
	}
	fp, data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	g, err := newGeneration(path, data, backend, &l.set)
	if err != nil {
		return nil, err
	}
	l.cur.Store(g)
	l.seen = fp
	return l, nil
}

// readFile reads the file at path and what identifies its version.
func readFile(path string) (fingerprint, []byte, error) {
	fp, err := stat(path)
	if err != nil {
		return fp, nil, fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
	}
	data, err := yamlnode.ReadFile(path)
	return fp, data, err
}

// Middleware returns the middleware of the file's stack name, for chi's
// r.Use or to wrap a handler. Each request is decided by the rules in
// force when it arrives, to its end (a reload does not change them under
// it). A request that Handler has decided by the same stack already
// passes through undecided: a stack is charged once per request. (Two
// stacks that hold one rule both charge it, each in its own decision.)
// It panics when the file has no such stack, as a wiring mistake; a
// reload that would remove a stack the program uses is refused instead.
func (l *Limits) Middleware(name string) func(http.Handler) http.Handler {
	l.mu.Lock()
	if _, ok := l.cur.Load().HTTP[name]; !ok {
		l.mu.Unlock()
		panic(fmt.Sprintf("ratelimit: %s has no stack %q (it has %s)", l.path, name, strings.Join(slices.Sorted(maps.Keys(l.cur.Load().HTTP)), ", ")))
	}
	l.wired[name] = true
	l.mu.Unlock()
	return func(next http.Handler) http.Handler {
		var built wrapped
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if decided, _ := r.Context().Value(decidedKey{}).(string); decided == name {
				next.ServeHTTP(w, r)
				return
			}
			built.of(l.cur.Load(), func(g *generation) map[string]http.Handler {
				return map[string]http.Handler{name: g.HTTP[name](next)}
			})[name].ServeHTTP(w, r)
		})
	}
}

// wrapped is next wrapped by the stacks of one generation, built again
// once another generation is in force: a request wraps nothing itself.
type wrapped struct {
	p atomic.Pointer[wrappedBy]
}

type wrappedBy struct {
	gen      *generation
	handlers map[string]http.Handler // by stack name
}

// of returns the handlers of generation g, built by wrap the first time
// g is asked for (two requests may both build them: either serves).
func (w *wrapped) of(g *generation, wrap func(*generation) map[string]http.Handler) map[string]http.Handler {
	if b := w.p.Load(); b != nil && b.gen == g {
		return b.handlers
	}
	b := &wrappedBy{gen: g, handlers: wrap(g)}
	w.p.Store(b)
	return b.handlers
}

// decidedKey is the context key under which Handler names the stack it
// decided a request by, for Middleware.
type decidedKey struct{}

// Handler limits the requests to next that match a stack's patterns (its
// match list, http.ServeMux patterns such as "POST /login") by that
// stack, the most specific pattern winning as in a ServeMux, and passes
// the others through. Wrap the whole mux with it; a key of kind route is
// the pattern matched.
func (l *Limits) Handler(next http.Handler) http.Handler {
	var built wrapped
	wrapAll := func(g *generation) map[string]http.Handler {
		hs := make(map[string]http.Handler, len(g.HTTP))
		for name, stack := range g.HTTP {
			hs[name] = stack(next)
		}
		return hs
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := l.cur.Load()
		name, pattern := g.StackFor(r)
		if name == "" {
			next.ServeHTTP(w, r)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), decidedKey{}, name))
		if r.Pattern == "" {
			r.Pattern = pattern // r is a copy: the caller's request is unchanged
		}
		built.of(g, wrapAll)[name].ServeHTTP(w, r)
	})
}

// Reload reads the file again and, when it changed, puts its rules in
// force: requests that arrive after see them, requests under way finish
// on the old ones, and no request waits. A rule that keeps its name keeps
// its clients' counts (the state it shares is keyed by the name and the
// algorithm: see "Keys" in package limiter); the old limiter is then
// closed, which gives back its leased units. A file with problems, or one
// that drops a stack the program uses, changes nothing: the error is
// returned, logged with slog.Default() and passed to the reload hook.
// After Close it reads nothing and returns an error wrapping fs.ErrClosed
// (os.ErrClosed is the same error).
func (l *Limits) Reload() error {
	l.mu.Lock()
	defer l.unlockAndReport(true)
	if l.closed {
		return errClosed
	}
	fp, data, err := readFile(l.path)
	if err == nil {
		l.seen = fp
	}
	return l.reload(data, err)
}

// reload puts data in force, unless err (reading it) or its problems say
// otherwise; l.mu is held, and the Limits are not closed.
func (l *Limits) reload(data []byte, err error) error {
	old := l.cur.Load()
	if err == nil && bytes.Equal(data, old.Data) {
		if l.failing { // back to the rules in force after a failed version
			l.report(nil)
		}
		return nil
	}
	start := time.Now()
	var g *generation
	if err == nil {
		g, err = newGeneration(l.path, data, l.store, &l.set)
	}
	if err == nil {
		err = l.keepsWired(g)
	}
	if err != nil {
		slog.Error("ratelimit: rules not reloaded; the previous rules stay in force", "file", l.path, "err", err)
		l.report(err)
		return err
	}
	l.cur.Store(g)
	if err := old.Close(); err != nil {
		slog.Warn("ratelimit: leased units of the previous rules not all given back", "file", l.path, "err", err)
	}
	slog.Info("ratelimit: rules reloaded", "file", l.path, "rules", len(g.File.Rules), "stacks", len(g.File.Stacks), "took", time.Since(start))
	l.report(nil)
	return nil
}

// keepsWired refuses a new generation that lacks a stack the program
// wired with Middleware, closing it.
func (l *Limits) keepsWired(g *generation) error {
	var missing []string
	for name := range l.wired {
		if _, ok := g.HTTP[name]; !ok {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	_ = g.Close()
	return &Problem{File: l.path, Line: 1, Column: 1, Field: "stacks",
		Message: "found no stack " + strings.Join(missing, ", ") + "; required: every stack the program wires with Middleware"}
}

// report records a reload's outcome for the hook (see unlockAndReport).
func (l *Limits) report(err error) {
	l.failing = err != nil
	l.pending = append(l.pending, err)
}

// Close gives back the units of the current rules' leases (see
// limiter.Limiter.Close) and stops reloads: call it once the server has
// stopped serving. It does not wait for the reload hook, which may still
// hear a reload made before. It is safe to call more than once.
func (l *Limits) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	return l.cur.Load().Close()
}
