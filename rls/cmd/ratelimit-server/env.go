package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// settings are the reference server's environment variables this
// server honours; unhonoured.go lists those it accepts and does not.
type settings struct {
	grpcAddr string // GRPC_HOST:GRPC_PORT, or GRPC_UDS's path (grpcUnix)
	grpcUnix bool   // GRPC_UDS is set: gRPC is served on that Unix socket
	// connAge and connGrace are GRPC_MAX_CONNECTION_AGE and
	// GRPC_MAX_CONNECTION_AGE_GRACE (24 h and 1 h by default, as in the
	// reference): a gRPC connection is sent a GOAWAY once it has lived
	// connAge (give or take a tenth), and closed connGrace later.
	connAge, connGrace time.Duration
	httpAddr           string // HOST:PORT
	debugAddr          string // DEBUG_HOST:DEBUG_PORT
	redisNetwork       string // REDIS_SOCKET_TYPE: tcp or unix
	redisURL           string // REDIS_URL: host:port or a socket's path; "" runs on miniredis
	configDir          string // RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY (runtimeDir); "": the example
	rulesFile          string // RATELIMIT_RULES_FILE: a rules file of the library's format instead (rulesfile.go)
	ignoreDotfiles     bool   // RUNTIME_IGNOREDOTFILES
	mergeDomains       bool   // MERGE_DOMAIN_CONFIG
	shadowMode         bool   // SHADOW_MODE
	quotaMode          bool   // QUOTA_MODE
	dynMetadata        bool   // RESPONSE_DYNAMIC_METADATA
	// forceStart is FORCE_START_WITHOUT_INITIAL_CONFIG: the server starts
	// without limits when its configuration does not load yet (the
	// runtime directory's; with xDS, before the first version).
	forceStart bool
	// needConfig is HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: the server
	// is healthy only while its configuration has a domain.
	needConfig bool
	// nearLimit is NEAR_LIMIT_RATIO (rls.Options.NearLimitRatio); 0 for
	// the default.
	nearLimit float64
	// xds is set by CONFIG_TYPE=GRPC_XDS_SOTW: the configuration comes
	// from an xDS server, not configDir (nor rulesFile).
	xds *xdsSettings
	// grpcTLS is the gRPC port's TLS (GRPC_SERVER_USE_TLS, tls.go); nil serves plain text.
	grpcTLS *tls.Config
	// redis is how Redis is reached but for redisNetwork and redisURL (redis.go).
	redis redisConn
	// denyEntries is the deny cache's size, of LOCAL_CACHE_SIZE_IN_BYTES (denycache.go).
	denyEntries int
	// keyPrefix is CACHE_KEY_PREFIX: the prefix of every key the
	// limiters write in Redis (limiter.WithPrefix); "" for the limiter's
	// default.
	keyPrefix string
	// headers are LIMIT_RESPONSE_HEADERS_ENABLED and its header names.
	headers                                   bool
	limitHeader, remainingHeader, resetHeader string
	logLevel                                  slog.Level
	logJSON                                   bool     // LOG_FORMAT=json
	unhonoured                                []string // the variables set that are accepted and not honoured, each with a note
}

// options are the Server's options the settings choose, with metrics m.
func (s settings) options(m *rls.Metrics) rls.Options {
	return rls.Options{ShadowMode: s.shadowMode, QuotaMode: s.quotaMode, ResponseHeaders: s.headers, LimitHeader: s.limitHeader,
		RemainingHeader: s.remainingHeader, ResetHeader: s.resetHeader, ResponseDynamicMetadata: s.dynMetadata, Metrics: m,
		NearLimitRatio: s.nearLimit}
}

// readEnv reads the settings from getenv, with the reference's defaults.
// A variable whose value this server cannot honour safely (another
// backend or configuration source) is an error rather than a warning, as
// is a TLS file that does not load.
func readEnv(getenv func(string) string) (settings, error) {
	or := func(name, def string) string { return orDefault(getenv, name, def) }
	s := settings{
		redisNetwork: strings.ToLower(or("REDIS_SOCKET_TYPE", "tcp")),
		redisURL:     getenv("REDIS_URL"),
	}
	if err := refuse(getenv); err != nil {
		return s, err
	}
	var err error
	for _, a := range []struct {
		addr            *string
		host, port, def string
	}{{&s.grpcAddr, "GRPC_HOST", "GRPC_PORT", "8081"}, {&s.httpAddr, "HOST", "PORT", "8080"}, {&s.debugAddr, "DEBUG_HOST", "DEBUG_PORT", "6070"}} {
		if *a.addr, err = address(getenv, a.host, a.port, a.def); err != nil {
			return s, err
		}
	}
	if s.redis, err = readRedis(getenv, s.redisURL); err != nil {
		return s, err
	}
	if s.redisNetwork != "tcp" && s.redisNetwork != "unix" {
		return s, fmt.Errorf("ratelimit: REDIS_SOCKET_TYPE %q: allowed: tcp, unix", s.redisNetwork)
	}
	root := getenv("RUNTIME_ROOT")
	switch s.rulesFile = getenv(rulesFileVar); {
	case s.rulesFile != "" && root != "":
		return s, fmt.Errorf("ratelimit: %s and RUNTIME_ROOT are both set: allowed: one of them (a rules file in the library's format, or the reference's runtime directory)", rulesFileVar)
	case s.rulesFile != "" && strings.EqualFold(getenv("CONFIG_TYPE"), "GRPC_XDS_SOTW"):
		return s, fmt.Errorf("ratelimit: %s is set with CONFIG_TYPE=GRPC_XDS_SOTW: allowed: one of them (a rules file in the library's format, or the xDS server's configuration)", rulesFileVar)
	}
	if uds := getenv("GRPC_UDS"); uds != "" {
		s.grpcAddr, s.grpcUnix = uds, true
	}
	if s.connAge, err = positive(or("GRPC_MAX_CONNECTION_AGE", "24h"), "GRPC_MAX_CONNECTION_AGE"); err != nil {
		return s, err
	}
	if s.connGrace, err = positive(or("GRPC_MAX_CONNECTION_AGE_GRACE", "1h"), "GRPC_MAX_CONNECTION_AGE_GRACE"); err != nil {
		return s, err
	}
	s.configDir = runtimeDir(getenv, root, s.redisURL != "" && s.rulesFile == "")
	if s.ignoreDotfiles, err = boolean(getenv, "RUNTIME_IGNOREDOTFILES"); err != nil {
		return s, err
	}
	if s.mergeDomains, err = boolean(getenv, "MERGE_DOMAIN_CONFIG"); err != nil {
		return s, err
	}
	// Polling follows every symlink of the path at each tick, so a swap
	// of the root and an edit under it both reload, whatever this says.
	if _, err = boolean(getenv, "RUNTIME_WATCH_ROOT"); err != nil {
		return s, err
	}
	if s.shadowMode, err = boolean(getenv, "SHADOW_MODE"); err != nil {
		return s, err
	}
	if s.quotaMode, err = boolean(getenv, "QUOTA_MODE"); err != nil {
		return s, err
	}
	if s.headers, err = boolean(getenv, "LIMIT_RESPONSE_HEADERS_ENABLED"); err != nil {
		return s, err
	}
	if s.dynMetadata, err = boolean(getenv, "RESPONSE_DYNAMIC_METADATA"); err != nil {
		return s, err
	}
	if s.forceStart, err = boolean(getenv, "FORCE_START_WITHOUT_INITIAL_CONFIG"); err != nil {
		return s, err
	}
	if s.needConfig, err = boolean(getenv, "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED"); err != nil {
		return s, err
	}
	if v := getenv("NEAR_LIMIT_RATIO"); v != "" {
		if s.nearLimit, err = strconv.ParseFloat(v, 64); err != nil || !(s.nearLimit > 0 && s.nearLimit <= 1) {
			return s, fmt.Errorf("ratelimit: NEAR_LIMIT_RATIO %q: allowed: a share of the limit above 0, at most 1, such as 0.8", v)
		}
	}
	s.limitHeader, s.remainingHeader, s.resetHeader = getenv("LIMIT_LIMIT_HEADER"), getenv("LIMIT_REMAINING_HEADER"), getenv("LIMIT_RESET_HEADER")
	if s.logLevel, err = logLevel(or("LOG_LEVEL", "warn")); err != nil {
		return s, err
	}
	switch f := strings.ToLower(or("LOG_FORMAT", "text")); f {
	case "text":
	case "json":
		s.logJSON = true
	default:
		return s, fmt.Errorf("ratelimit: LOG_FORMAT %q: allowed: text, json", f)
	}
	if s.grpcTLS, err = grpcTLS(getenv); err != nil {
		return s, err
	}
	if s.denyEntries, err = denyEntries(getenv); err != nil {
		return s, err
	}
	if s.keyPrefix = getenv("CACHE_KEY_PREFIX"); strings.ContainsAny(s.keyPrefix, "{}") {
		return s, fmt.Errorf("ratelimit: CACHE_KEY_PREFIX %q: allowed: a prefix without braces (a key's braces choose its Redis Cluster slot)", s.keyPrefix)
	}
	s.unhonoured = unhonoured(getenv)
	if strings.EqualFold(getenv("CONFIG_TYPE"), "GRPC_XDS_SOTW") {
		x, err := readXDS(getenv)
		if err != nil {
			return s, err
		}
		x.forceStart = s.forceStart
		s.xds = &x
	}
	if s.rulesFile != "" {
		s.unhonoured = append(s.unhonoured, notes(getenv, []string{"FORCE_START_WITHOUT_INITIAL_CONFIG"}, "a rules file must load for the server to start")...)
	}
	if s.grpcTLS == nil {
		s.unhonoured = append(s.unhonoured, notes(getenv, grpcTLSVars, "GRPC_SERVER_USE_TLS is not true: the gRPC port serves plain text")...)
	}
	if s.grpcUnix {
		s.unhonoured = append(s.unhonoured, notes(getenv, []string{"GRPC_HOST", "GRPC_PORT"}, "GRPC_UDS is set: gRPC is served on its Unix socket")...)
	}
	s.unhonoured = append(s.unhonoured, s.redis.unused(getenv)...)
	return s, nil
}

// defaultRuntimeRoot is the reference's RUNTIME_ROOT when it is unset.
const defaultRuntimeRoot = "/srv/runtime_data/current"

// runtimeDir is the runtime directory,
// RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY, of root (the
// value of RUNTIME_ROOT). An unset root is the reference's default when
// defaulted (a real Redis and no rules file: a deployment that mounts
// its files there gets them, or fails at start when they are missing,
// as the reference does), or else "": the example configuration.
// RUNTIME_SUBDIRECTORY has no default, as in the reference.
func runtimeDir(getenv func(string) string, root string, defaulted bool) string {
	switch {
	case root == "" && !defaulted:
		return ""
	case root == "":
		root = defaultRuntimeRoot
	}
	return filepath.Join(root, getenv("RUNTIME_SUBDIRECTORY"), orDefault(getenv, "RUNTIME_APPDIRECTORY", "config"))
}

// address is host:port of the variables host (0.0.0.0 when unset) and
// port (def when unset), a port number from 0 to 65535 (0: any free
// port), as the reference reads it: a service name ("http") or anything
// else is an error naming the variable, not a port the listener resolves.
func address(getenv func(string) string, host, port, def string) (string, error) {
	p := orDefault(getenv, port, def)
	if _, err := strconv.ParseUint(p, 10, 16); err != nil {
		return "", fmt.Errorf("ratelimit: %s %q: allowed: a port number from 0 to 65535", port, p)
	}
	return net.JoinHostPort(orDefault(getenv, host, "0.0.0.0"), p), nil
}

// orDefault is the value of variable name, or def when it is unset or
// empty, as the reference reads its defaults.
func orDefault(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// boolean reads a boolean variable; unset is false.
func boolean(getenv func(string) string, name string) (bool, error) {
	v := getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("ratelimit: %s: %w", name, err)
	}
	return b, nil
}

// logLevel reads LOG_LEVEL as the reference's levels: trace and debug
// are debug, fatal and panic are error.
func logLevel(v string) (slog.Level, error) {
	switch strings.ToLower(v) {
	case "trace", "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error", "fatal", "panic":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("ratelimit: LOG_LEVEL %q: allowed: trace, debug, info, warn, error, fatal, panic", v)
}

// logger logs to w as s says.
func (s settings) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.logLevel}
	if s.logJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// osEnv is the process's environment.
func osEnv(name string) string { return os.Getenv(name) }
