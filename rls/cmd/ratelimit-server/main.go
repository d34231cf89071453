// Command ratelimit-server is an Envoy rate limit service (RLS v3) on
// Redis, configured as the reference server (envoyproxy/ratelimit) is:
// its environment variables (GRPC_HOST, GRPC_PORT or GRPC_UDS,
// GRPC_MAX_CONNECTION_AGE and its _GRACE, HOST, PORT,
// DEBUG_HOST, DEBUG_PORT, REDIS_SOCKET_TYPE, REDIS_URL, REDIS_TYPE
// (single, sentinel, cluster) and the other Redis connection variables
// (redis.go), RUNTIME_ROOT, RUNTIME_SUBDIRECTORY, RUNTIME_APPDIRECTORY,
// RUNTIME_IGNOREDOTFILES, RUNTIME_WATCH_ROOT, SHADOW_MODE, QUOTA_MODE, LOG_LEVEL,
// LOG_FORMAT, GRPC_SERVER_USE_TLS and its certificates (tls.go),
// LOCAL_CACHE_SIZE_IN_BYTES (denycache.go); the others it accepts are
// warned about once at start) and
// its configuration files in
// $RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/$RUNTIME_APPDIRECTORY, reloaded when
// they change (an edit, an editor's rename, a ConfigMap's ..data swap, a
// swap of a symlinked RUNTIME_ROOT); a version that does not load is
// logged and the configuration in force is kept. With
// CONFIG_TYPE=GRPC_XDS_SOTW it takes its configuration from an xDS
// server instead (CONFIG_GRPC_XDS_SERVER_URL, CONFIG_GRPC_XDS_NODE_ID
// and the other variables xdsenv.go reads), as Envoy Gateway configures
// the reference, and serves once the first valid version arrived.
// RATELIMIT_RULES_FILE names instead a rules file of the library's own
// format, whose stacks with a domain it serves, reloaded as the runtime
// directory is.
//
// With REDIS_URL, RUNTIME_ROOT defaults to the reference's
// /srv/runtime_data/current (unless RATELIMIT_RULES_FILE is set): a
// runtime directory missing there stops it at start. Without REDIS_URL
// it runs on an in-process miniredis, with an example configuration
// unless RUNTIME_ROOT names one, and prints how to call it.
// SIGTERM or SIGINT stops it once the calls in flight have been answered,
// or after 5 s.
// See docs/envoy.md.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

//go:embed example.yaml
var example []byte

// drainFor bounds how long a stop waits for the calls in flight.
const drainFor = 5 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, osEnv, os.Stdout, os.Stderr); err != nil {
		// Not through log or slog: the default logger is the configured
		// one by now, and LOG_LEVEL=warn would drop the reason.
		fmt.Fprintln(os.Stderr, "ratelimit-server:", err)
		stop()
		os.Exit(1)
	}
}

// reloadEvery is how often the runtime directory is polled for changes.
const reloadEvery = time.Second

// run serves until ctx is done, then drains and returns. It prints where
// it serves to out and logs to logs.
func run(ctx context.Context, getenv func(string) string, out, logs io.Writer) error {
	s, err := readEnv(getenv)
	if err != nil {
		return err
	}
	log := s.logger(logs)
	for _, u := range s.unhonoured {
		log.Warn("ratelimit: accepted, not honoured: " + u)
	}
	addr := s.redisURL
	if addr == "" {
		m, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("ratelimit: in-process miniredis: %w", err)
		}
		defer m.Close()
		addr = m.Addr()
	}
	network := s.redisNetwork
	if s.redisURL == "" {
		network = "tcp"
	}
	rdb := s.redis.client(network, addr)
	defer rdb.Close()
	if err := s.redis.check(ctx, rdb, network, addr, log); err != nil {
		return err
	}
	st, err := redisstore.New(rdb, s.redis.storeOptions()...)
	if err != nil {
		return err
	}
	slog.SetDefault(log) // the Server's failures: one line per cause a minute
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := rls.NewMetrics(reg)
	if err != nil {
		return err
	}
	svc, stopSource, err := configure(ctx, s, st, s.options(metrics), log)
	if err != nil {
		return err
	}
	if svc == nil {
		fmt.Fprintln(out, "ratelimit-server: stopped")
		return nil
	}
	svc.metrics = reg
	defer func() {
		stopSource()
		if err := svc.close(); err != nil {
			log.Warn(err.Error())
		}
	}()
	ls, err := listen(s)
	if err != nil {
		return err
	}
	failed := ls.serve(svc)
	if s.redis.health && s.redisURL != "" {
		pinging, stopPinging := context.WithCancel(ctx)
		defer stopPinging()
		go watchRedis(pinging, rdb, redisPingEvery, ls.setRedis)
	}
	configs, _ := svc.state()
	greet(out, ls, s, configs)

	select {
	case err := <-failed:
		ls.stop(drainFor)
		return fmt.Errorf("ratelimit: serving: %w", err)
	case <-ctx.Done():
	}
	ls.stop(drainFor)
	fmt.Fprintln(out, "ratelimit-server: stopped")
	return nil
}

// loadConfigs reads the runtime directory, or the example without one.
func loadConfigs(s settings) ([]*rls.Config, error) {
	switch {
	case s.configDir != "" && s.mergeDomains:
		return rls.LoadDirMerged(s.configDir, s.ignoreDotfiles)
	case s.configDir != "":
		return rls.LoadDir(s.configDir, s.ignoreDotfiles)
	}
	c, err := rls.Parse("example.yaml", example)
	if err != nil {
		return nil, err
	}
	return []*rls.Config{c}, nil
}

// configure builds the service on its configuration source: the xDS
// server with CONFIG_TYPE=GRPC_XDS_SOTW, waiting for its first valid
// version, or else the rules file RATELIMIT_RULES_FILE names, or the
// runtime directory (or the example), polled for changes. stop stops
// the source; call it before closing the service. A nil service means
// ctx was done before the xDS server sent one.
func configure(ctx context.Context, s settings, st store.Store, opts rls.Options, log *slog.Logger) (svc *service, stop func(), err error) {
	switch {
	case s.xds != nil:
		return startXDS(ctx, *s.xds, func(configs []*rls.Config) (*service, error) {
			return newService(st, opts, "", func() ([]*rls.Config, error) { return configs, nil }, log, s.limiterOptions()...)
		}, log)
	case s.rulesFile != "":
		svc, err = newFileService(st, opts, s.rulesFile, log, s.limiterOptions()...)
	default:
		start := newService
		if s.forceStart {
			start = newServiceForced
		}
		svc, err = start(st, opts, s.configDir, func() ([]*rls.Config, error) { return loadConfigs(s) }, log, s.limiterOptions()...)
	}
	if err != nil {
		return nil, nil, err
	}
	watching, stopWatching := context.WithCancel(ctx)
	go svc.watch(watching, reloadEvery)
	return svc, stopWatching, nil
}

// greet prints where the server listens, on what, and how to call it.
func greet(out io.Writer, ls *listeners, s settings, configs []*rls.Config) {
	addr, target := ls.grpc.Addr().String(), ls.grpc.Addr().String()
	if s.grpcUnix {
		addr, target = "unix:"+addr, "-unix "+addr // gRPC's target; grpcurl's flag and path
	}
	fmt.Fprintf(out, "ratelimit-server: serving envoy.service.ratelimit.v3.RateLimitService on %s\n", addr)
	fmt.Fprintf(out, "ratelimit-server: serving /healthcheck and /json on %s\n", ls.http.Addr())
	fmt.Fprintf(out, "ratelimit-server: serving /rlconfig and /debug/pprof/ on %s\n", ls.debug.Addr())
	store, where := "redis ("+s.redis.typ+") at "+s.redisURL, "config from "+s.configDir
	if s.redisURL == "" {
		store = "an in-process miniredis (set REDIS_URL=host:port for a real Redis)"
	}
	switch {
	case s.xds != nil:
		where = fmt.Sprintf("config from the xDS server at %s for node %q", s.xds.serverURL, s.xds.node.GetId())
	case s.rulesFile != "":
		where = "the Envoy stacks of " + s.rulesFile
	case s.configDir == "":
		where = "the example config (set RUNTIME_ROOT and RUNTIME_SUBDIRECTORY, or RATELIMIT_RULES_FILE, for yours)"
	}
	fmt.Fprintf(out, "ratelimit-server: on %s, with %s\n", store, where)
	for _, c := range configs {
		fmt.Fprintf(out, "ratelimit-server: domain %q\n", c.Domain)
	}
	if s.configDir == "" && s.rulesFile == "" && s.xds == nil {
		const req = `{"domain":"example","descriptors":[{"entries":[{"key":"remote_address","value":"10.0.0.1"}]}]}`
		security := "-plaintext"
		if s.grpcTLS != nil {
			security = "-cacert ca.pem" // and -cert, -key with GRPC_CLIENT_TLS_CACERT
		}
		fmt.Fprintf(out, `ratelimit-server: try it (the 6th call within the hour is OVER_LIMIT):
  grpcurl %s -d '%s' %s envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit
  curl -i -d '%s' http://%s/json
  curl http://%s/rlconfig
`, security, req, target, req, ls.http.Addr(), ls.debug.Addr())
	}
}
