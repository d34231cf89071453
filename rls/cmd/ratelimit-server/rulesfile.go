package main

import (
	"log/slog"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// rulesFileVar names a rules file in the library's own format
// (docs/config.md) to serve instead of the reference's runtime directory:
// its Envoy stacks, the stacks with a domain.
const rulesFileVar = "RATELIMIT_RULES_FILE"

// newFileService serves the Envoy stacks of the rules file at path on st:
// one Server for the service's life, on the file's limiter, which
// config.Limits rebuilds on each reload (watchFile) with the counts kept.
// A file that does not load stops the server from starting.
func newFileService(st store.Store, opts rls.Options, path string, log *slog.Logger, lopt ...limiter.Option) (*service, error) {
	s := &service{st: st, opts: opts, log: log}
	l, err := config.Load(path, st, config.WithReloadHook(s.fileReloaded), config.WithLimiterOptions(lopt...))
	if err != nil {
		return nil, err
	}
	srv, err := rls.FromFile(l, opts)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	s.rules = l
	s.cur.Store(&generation{srv: srv})
	return s, nil
}

// fileReloaded records a reload of the rules file: in the metrics, and
// for /rlconfig while the version in force is an older one. config.Limits
// logs it.
func (s *service) fileReloaded(err error) {
	s.opts.Metrics.Reload(err)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = err
}

// rlconfig is what /rlconfig prints: the configuration in force (the rules
// file as config.Check prints it, or each limit of the runtime directory
// as the reference prints it), and the last reload's error while an older
// version is in force.
func (s *service) rlconfig() (string, error) {
	configs, err := s.state()
	if s.rules != nil {
		return s.rules.Envoy().String(), err
	}
	return rls.Dump(configs...), err
}
