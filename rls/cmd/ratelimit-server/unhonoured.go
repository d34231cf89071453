package main

import (
	"fmt"
	"strings"
)

// ignored are the reference server's variables this server accepts and
// does not honour, in groups, each with what it does here (docs/envoy.md
// lists them too). A variable set to anything is warned about once at
// start.
var ignored = []struct {
	names []string
	note  string
}{
	{[]string{"USE_STATSD", "STATSD_HOST", "STATSD_PORT", "USE_DOG_STATSD", "USE_DOG_STATSD_MOGRIFIERS", "EXTRA_TAGS", "STATS_FLUSH_INTERVAL", "DISABLE_STATS"},
		"no statsd: Prometheus series are served at /metrics on the debug port"},
	{[]string{"USE_PROMETHEUS", "PROMETHEUS_ADDR", "PROMETHEUS_PATH", "PROMETHEUS_MAPPER_YAML", "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS"},
		"Prometheus series are always served, at /metrics on the debug port (DEBUG_HOST, DEBUG_PORT)"},
	{[]string{"REDIS_PIPELINE_WINDOW", "REDIS_PIPELINE_LIMIT", "REDIS_CLUSTER_PIPELINE_PARALLELISM", "REDIS_POOL_ON_EMPTY_BEHAVIOR"},
		"the Redis client's defaults apply; decisions of concurrent requests go to Redis together, one batch call per round trip"},
	{[]string{"REDIS_STARTUP_INITIAL_INTERVAL", "REDIS_STARTUP_MAX_INTERVAL", "REDIS_STARTUP_MAX_ELAPSED_TIME"},
		"the server starts without waiting for Redis (one ping at start stops it on refused credentials or a failed TLS handshake)"},
	{[]string{"REDIS_PERSECOND", "REDIS_PERSECOND_SOCKET_TYPE", "REDIS_PERSECOND_TYPE", "REDIS_PERSECOND_URL", "REDIS_PERSECOND_POOL_SIZE", "REDIS_PERSECOND_AUTH", "REDIS_PERSECOND_TLS", "REDIS_PERSECOND_SENTINEL_AUTH", "REDIS_PERSECOND_PIPELINE_WINDOW", "REDIS_PERSECOND_PIPELINE_LIMIT", "REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM", "REDIS_PERSECOND_TIMEOUT", "REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR"},
		"per-second limits are counted on REDIS_URL with the others"},
	{[]string{"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"}, "always true here: a refused request consumes nothing on any descriptor, in the same round trip"},
	{[]string{"EXPIRATION_JITTER_MAX_SECONDS"}, "keys expire with their window"},
	{[]string{"XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "XDS_CLIENT_BACKOFF_RANDOM_FACTOR", "XDS_CLIENT_BACKOFF_JITTER"},
		"the xDS client connects again after CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL, doubled at each failure up to XDS_CLIENT_BACKOFF_MAX_INTERVAL, give or take a half"},
	{[]string{"MEMCACHE_HOST_PORT", "MEMCACHE_MAX_IDLE_CONNS", "MEMCACHE_SRV", "MEMCACHE_SRV_REFRESH", "MEMCACHE_TLS", "MEMCACHE_TLS_CLIENT_CERT", "MEMCACHE_TLS_CLIENT_KEY", "MEMCACHE_TLS_CACERT", "MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION"},
		"Redis only (BACKEND_TYPE other than redis is refused)"},
	{[]string{"TRACING_ENABLED", "TRACING_SERVICE_NAME", "TRACING_SERVICE_NAMESPACE", "TRACING_SERVICE_INSTANCE_ID", "TRACING_EXPORTER_PROTOCOL", "TRACING_SAMPLING_RATE"},
		"no tracing"},
}

// unhonoured names each ignored variable that is set, with its note.
func unhonoured(getenv func(string) string) []string {
	var set []string
	for _, g := range ignored {
		set = append(set, notes(getenv, g.names, g.note)...)
	}
	return set
}

// notes names each variable of names that is set, with note.
func notes(getenv func(string) string, names []string, note string) []string {
	var set []string
	for _, name := range names {
		if getenv(name) != "" {
			set = append(set, name+": "+note)
		}
	}
	return set
}

// refuse is an error for a variable whose value this server cannot honour
// and must not ignore: another backend or configuration source.
func refuse(getenv func(string) string) error {
	is := func(name, want string) bool { v := getenv(name); return v == "" || strings.EqualFold(v, want) }
	switch {
	case !is("CONFIG_TYPE", "FILE") && !is("CONFIG_TYPE", "GRPC_XDS_SOTW"):
		return fmt.Errorf("ratelimit: CONFIG_TYPE %q is not supported (only FILE and GRPC_XDS_SOTW)", getenv("CONFIG_TYPE"))
	case !is("BACKEND_TYPE", "redis"):
		return fmt.Errorf("ratelimit: BACKEND_TYPE %q is not supported (only redis)", getenv("BACKEND_TYPE"))
	}
	return nil
}
