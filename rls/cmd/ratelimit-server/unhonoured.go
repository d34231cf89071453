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
	{[]string{"REDIS_POOL_SIZE", "REDIS_PIPELINE_WINDOW", "REDIS_PIPELINE_LIMIT", "REDIS_CLUSTER_PIPELINE_PARALLELISM", "REDIS_POOL_ON_EMPTY_BEHAVIOR", "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION"},
		"the Redis client's defaults apply; a request's descriptors are one round trip, never pipelined across requests"},
	{[]string{"REDIS_TIMEOUT", "REDIS_STARTUP_INITIAL_INTERVAL", "REDIS_STARTUP_MAX_INTERVAL", "REDIS_STARTUP_MAX_ELAPSED_TIME"},
		"each call waits at most the store's timeout (100 ms) and the caller's deadline; the server starts without waiting for Redis"},
	{[]string{"REDIS_TLS_CLIENT_CERT", "REDIS_TLS_CLIENT_KEY", "REDIS_TLS_CACERT", "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", "REDIS_SENTINEL_AUTH"},
		"no Redis TLS or sentinel yet (REDIS_TLS=true and REDIS_AUTH are refused)"},
	{[]string{"REDIS_PERSECOND", "REDIS_PERSECOND_SOCKET_TYPE", "REDIS_PERSECOND_TYPE", "REDIS_PERSECOND_URL", "REDIS_PERSECOND_POOL_SIZE", "REDIS_PERSECOND_AUTH", "REDIS_PERSECOND_TLS", "REDIS_PERSECOND_SENTINEL_AUTH", "REDIS_PERSECOND_PIPELINE_WINDOW", "REDIS_PERSECOND_PIPELINE_LIMIT", "REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM", "REDIS_PERSECOND_TIMEOUT", "REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR"},
		"per-second limits are counted on REDIS_URL with the others"},
	{[]string{"LOCAL_CACHE_SIZE_IN_BYTES"}, "no local cache of refusals yet"},
	{[]string{"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"}, "always true here: a refused request consumes nothing on any descriptor, in the same round trip"},
	{[]string{"EXPIRATION_JITTER_MAX_SECONDS"}, "keys expire with their window"},
	{[]string{"NEAR_LIMIT_RATIO"}, "near_limit counts past 80% of the limit (rls.NearLimitRatio)"},
	{[]string{"CACHE_KEY_PREFIX"}, "keys are the limiter's own, named by rule; counts start afresh at cutover"},
	{[]string{"RESPONSE_DYNAMIC_METADATA"}, "an OVER_LIMIT answer always names the refusing rules in its dynamic_metadata"},
	{[]string{"QUOTA_MODE"}, "no quota mode"},
	{[]string{"FORCE_START_WITHOUT_INITIAL_CONFIG", "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED"}, "the server starts only on a valid configuration (FORCE_START_WITHOUT_INITIAL_CONFIG is honoured with CONFIG_TYPE=GRPC_XDS_SOTW)"},
	{[]string{"GRPC_MAX_CONNECTION_AGE", "GRPC_MAX_CONNECTION_AGE_GRACE"}, "connections are not aged"},
	{[]string{"GRPC_SERVER_TLS_CERT", "GRPC_SERVER_TLS_KEY", "GRPC_CLIENT_TLS_CACERT", "GRPC_CLIENT_TLS_SAN"}, "no gRPC TLS yet (GRPC_SERVER_USE_TLS=true is refused)"},
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
		for _, name := range g.names {
			if getenv(name) != "" {
				set = append(set, name+": "+g.note)
			}
		}
	}
	return set
}

// refuse is an error for a variable whose value this server cannot honour
// and must not ignore: serving in plain text when TLS was asked for,
// dropping a Redis password, or another backend or configuration source.
func refuse(getenv func(string) string) error {
	is := func(name, want string) bool { v := getenv(name); return v == "" || strings.EqualFold(v, want) }
	off := func(name string) bool { b, err := boolean(getenv, name); return err == nil && !b }
	switch {
	case !is("REDIS_TYPE", "single"):
		return fmt.Errorf("ratelimit: REDIS_TYPE %q is not supported yet (only single)", getenv("REDIS_TYPE"))
	case !is("CONFIG_TYPE", "FILE") && !is("CONFIG_TYPE", "GRPC_XDS_SOTW"):
		return fmt.Errorf("ratelimit: CONFIG_TYPE %q is not supported (only FILE and GRPC_XDS_SOTW)", getenv("CONFIG_TYPE"))
	case !is("BACKEND_TYPE", "redis"):
		return fmt.Errorf("ratelimit: BACKEND_TYPE %q is not supported (only redis)", getenv("BACKEND_TYPE"))
	case !off("GRPC_SERVER_USE_TLS"):
		return fmt.Errorf("ratelimit: GRPC_SERVER_USE_TLS=%s is not supported yet: the gRPC port would serve plain text", getenv("GRPC_SERVER_USE_TLS"))
	case !off("REDIS_TLS"):
		return fmt.Errorf("ratelimit: REDIS_TLS=%s is not supported yet", getenv("REDIS_TLS"))
	case getenv("REDIS_AUTH") != "":
		return fmt.Errorf("ratelimit: REDIS_AUTH is not supported yet")
	case getenv("GRPC_UDS") != "":
		return fmt.Errorf("ratelimit: GRPC_UDS is not supported yet: set GRPC_HOST and GRPC_PORT")
	}
	return nil
}
