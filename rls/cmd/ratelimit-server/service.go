package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// service answers RLS calls on the configuration in force, a generation
// that a reload of the runtime directory replaces atomically: a call
// under way finishes on the generation it started on, which is closed
// once the last such call has returned. Every generation's limiter is
// built on one store, and a kept descriptor keeps its rule name (names
// depend on the file's descriptors only), so its count carries over.
type service struct {
	rlsv3.UnimplementedRateLimitServiceServer
	st   store.Store
	opts rls.Options
	dir  string                        // the runtime directory; "" watches nothing
	load func() ([]*rls.Config, error) // reads the configuration
	log  *slog.Logger
	lopt []limiter.Option // each generation's limiter's
	// metrics are the series the debug port's /metrics serves: the
	// Server's (opts.Metrics) and the process's; nil serves none.
	metrics prometheus.Gatherer
	cur     atomic.Pointer[generation]
	closed  atomic.Bool // the generation in force is retired too
	// rules are the rules file's (RATELIMIT_RULES_FILE: see rulesfile.go),
	// served by one generation whose Server follows their reloads; nil:
	// the runtime directory's.
	rules *config.Limits

	mu     sync.Mutex // serialises reloads; guards seen and failed
	seen   dirState   // the directory's state when last loaded
	failed error      // the last reload's error; nil once one succeeds
	// swapped, when set, is called once a new configuration is in force
	// (the listeners' health follows it); set before the service serves.
	swapped func()
}

// generation is one configuration in force: its configs, the limiter
// built on their rules and the Server answering on it (a rules file's:
// the Server alone, its limiter the file's).
type generation struct {
	configs []*rls.Config
	lim     *limiter.Limiter // nil for a rules file's
	srv     *rls.Server

	mu      sync.RWMutex // read-held by each call; write-held to retire
	retired bool
}

// newService loads the configuration and builds its first generation,
// its limiter with lopt; an error here stops the server from starting.
func newService(st store.Store, opts rls.Options, dir string, load func() ([]*rls.Config, error), log *slog.Logger, lopt ...limiter.Option) (*service, error) {
	s := &service{st: st, opts: opts, dir: dir, load: load, log: log, lopt: lopt}
	if dir != "" {
		s.seen = statDir(dir)
	}
	configs, err := load()
	if err != nil {
		return nil, err
	}
	g, err := s.build(configs)
	if err != nil {
		return nil, err
	}
	s.cur.Store(g)
	return s, nil
}

// newServiceForced is newService for FORCE_START_WITHOUT_INITIAL_CONFIG:
// a configuration that does not load (no directory yet, no file in it, a
// problem in one) is logged and kept for /rlconfig, and the service
// starts on none, answering every call OK, until a version of the
// directory loads (poll).
func newServiceForced(st store.Store, opts rls.Options, dir string, load func() ([]*rls.Config, error), log *slog.Logger, lopt ...limiter.Option) (*service, error) {
	s, err := newService(st, opts, dir, load, log, lopt...)
	if err == nil {
		return s, nil
	}
	s, emptyErr := newService(st, opts, dir, func() ([]*rls.Config, error) { return nil, nil }, log, lopt...)
	if emptyErr != nil {
		return nil, emptyErr
	}
	s.load, s.failed = load, err
	log.Error("ratelimit: the configuration does not load; serving without limits until it does (FORCE_START_WITHOUT_INITIAL_CONFIG)", "dir", dir, "error", err)
	return s, nil
}

// hasDomains reports whether the configuration in force has a domain
// (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED); a rules file's, which must
// load for the server to start, always has.
func (s *service) hasDomains() bool {
	return s.rules != nil || len(s.cur.Load().configs) > 0
}

// noLimits is the rule the limiter of a configuration without limits is
// built on, a limiter needing one: no call is decided on it. A name
// without a dot that does not start with '_' is none rls.Limits gives.
var noLimits = limiter.Rule{Name: "no-limits", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}}

// build makes a generation of configs. Configs without limits (no
// domain, or only unlimited descriptors) answer every call OK, as the
// reference server does.
func (s *service) build(configs []*rls.Config) (*generation, error) {
	rules := rls.Limits(configs...)
	if len(rules) == 0 {
		rules = []limiter.Rule{noLimits}
	}
	lim, err := limiter.New(s.st, rules, s.lopt...)
	if err != nil {
		return nil, err
	}
	srv, err := rls.NewServer(lim, configs, s.opts)
	if err != nil {
		_ = lim.Close()
		return nil, err
	}
	return &generation{configs: configs, lim: lim, srv: srv}, nil
}

// ShouldRateLimit decides req on the generation in force.
func (s *service) ShouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	for {
		if res, ok, err := s.cur.Load().serve(ctx, req); ok {
			return res, err
		}
		if s.closed.Load() {
			return nil, status.Error(codes.Unavailable, "ratelimit: the server is stopping")
		}
		// Retired between the load and the lock: a newer one is in force.
	}
}

// serve decides req on g unless g is retired.
func (g *generation) serve(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, bool, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.retired {
		return nil, false, nil
	}
	res, err := g.srv.ShouldRateLimit(ctx, req)
	return res, true, err
}

// retire waits for g's calls under way, then closes its limiter.
func (g *generation) retire() error {
	g.mu.Lock()
	g.retired = true
	g.mu.Unlock()
	if g.lim == nil {
		return nil
	}
	return g.lim.Close()
}

// watch polls the runtime directory, or the rules file, every interval
// until ctx is done.
func (s *service) watch(ctx context.Context, interval time.Duration) {
	if s.rules != nil {
		s.rules.Watch(ctx, interval) // a ConfigMap's ..data swap included
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.poll()
		}
	}
}

// poll reloads the runtime directory when its state changed since it was
// last loaded. A configuration that does not load (a problem at
// file:line:column, a directory that went away) is logged once and
// remembered for /rlconfig, and the one in force stays until a valid
// version appears.
func (s *service) poll() {
	if s.dir == "" {
		return
	}
	now := statDir(s.dir) // before reading: a change while loading is seen next time
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() || now.same(s.seen) {
		return
	}
	s.seen = now
	configs, err := s.load()
	_ = s.swap(configs, err, "dir", s.dir)
}

// update makes configs, a version from the xDS server, the configuration
// in force, as poll does a version of the runtime directory; err is why
// the version is not a configuration. The error returned is why it is
// not in force.
func (s *service) update(configs []*rls.Config, err error, version string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return fmt.Errorf("ratelimit: the server is stopping")
	}
	return s.swap(configs, err, "xds_version", version)
}

// swap makes configs the configuration in force and retires the
// previous one; when err, or building configs fails, it logs the error,
// keeps it for /rlconfig and returns it, and the configuration in force
// stays. The log lines carry where, attributes naming the version. The
// caller holds s.mu.
func (s *service) swap(configs []*rls.Config, err error, where ...any) error {
	var g *generation
	if err == nil {
		g, err = s.build(configs)
	}
	if s.opts.Metrics != nil {
		s.opts.Metrics.Reload(err)
	}
	if err != nil {
		s.failed = err
		s.log.Error("ratelimit: reload failed; the configuration in force is kept", append(where, "error", err)...)
		return err
	}
	s.failed = nil
	old := s.cur.Swap(g)
	if s.swapped != nil {
		s.swapped()
	}
	s.log.Info("ratelimit: reloaded", append(where, "domains", len(configs), "rules", len(rls.Limits(configs...)))...)
	if err := old.retire(); err != nil {
		s.log.Warn("ratelimit: closing the previous limiter", "error", err)
	}
	return nil
}

// state is the configuration in force and the last reload's error.
func (s *service) state() ([]*rls.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.Load().configs, s.failed
}

// close retires the generation in force; call it once serving stopped.
func (s *service) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed.Store(true)
	err := s.cur.Load().retire()
	if s.rules != nil {
		err = s.rules.Close() // after the calls under way: gives back leased units
	}
	if err != nil {
		return fmt.Errorf("ratelimit: closing the limiter: %w", err)
	}
	return nil
}
