package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// env is a getenv of vars, with every port on loopback and free.
func env(vars ...string) func(string) string {
	m := map[string]string{"GRPC_HOST": "127.0.0.1", "GRPC_PORT": "0", "HOST": "127.0.0.1", "PORT": "0", "DEBUG_HOST": "127.0.0.1", "DEBUG_PORT": "0"}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(name string) string { return m[name] }
}

// runStopped runs the server with getenv until it has started, stops it
// and returns its log.
func runStopped(t *testing.T, getenv func(string) string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stops as soon as it serves
	var logs bytes.Buffer
	if err := run(ctx, getenv, io.Discard, &logs); err != nil {
		t.Fatal(err)
	}
	return logs.String()
}

func TestUnhonouredWarnedOnceInJSON(t *testing.T) {
	names := []string{"USE_STATSD", "REDIS_PIPELINE_LIMIT", "REDIS_PIPELINE_WINDOW", "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"}
	vars := []string{"LOG_FORMAT=json", "LOG_LEVEL=info", "SHADOW_MODE=true", "QUOTA_MODE=true", "RUNTIME_WATCH_ROOT=false", "MERGE_DOMAIN_CONFIG=true", "RESPONSE_DYNAMIC_METADATA=true", "NEAR_LIMIT_RATIO=0.9"}
	for _, n := range names {
		vars = append(vars, n+"=1")
	}
	logs := runStopped(t, env(vars...))
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("LOG_FORMAT=json logged a line that is not JSON: %s", l)
		}
	}
	for _, n := range names {
		if got := strings.Count(logs, n+":"); got != 1 {
			t.Errorf("%s warned about %d times, want once:\n%s", n, got, logs)
		}
	}
	for _, n := range []string{"LOG_FORMAT", "LOG_LEVEL", "SHADOW_MODE", "QUOTA_MODE", "RUNTIME_WATCH_ROOT", "MERGE_DOMAIN_CONFIG", "RESPONSE_DYNAMIC_METADATA", "NEAR_LIMIT_RATIO"} {
		if strings.Contains(logs, n) {
			t.Errorf("%s is honoured, yet warned about:\n%s", n, logs)
		}
	}
}

func TestLogLevel(t *testing.T) {
	if logs := runStopped(t, env("LOG_LEVEL=error", "USE_STATSD=true")); logs != "" {
		t.Fatalf("LOG_LEVEL=error logged a warning:\n%s", logs)
	}
	if logs := runStopped(t, env("USE_STATSD=true")); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "USE_STATSD") {
		t.Fatalf("the default (warn, text) did not log the warning as text:\n%s", logs)
	}
}

func TestEnvRefusals(t *testing.T) {
	for _, kv := range []string{"GRPC_SERVER_USE_TLS=true",
		"CONFIG_TYPE=GRPC_XDS_DELTA", "BACKEND_TYPE=memcache", "REDIS_TYPE=ring", "REDIS_SOCKET_TYPE=udp",
		"LOG_LEVEL=loud", "LOG_FORMAT=xml", "SHADOW_MODE=maybe", "QUOTA_MODE=maybe", "RESPONSE_DYNAMIC_METADATA=maybe", "NEAR_LIMIT_RATIO=80%", "NEAR_LIMIT_RATIO=1.5", "RUNTIME_WATCH_ROOT=maybe", "RATELIMIT_RULES_FILE=rules.yaml"} {
		name, _, _ := strings.Cut(kv, "=")
		_, err := readEnv(env(kv, "RUNTIME_ROOT=/srv/runtime")) // a rules file is refused beside a runtime directory
		if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v, want an error naming %s (and no secret)", kv, err, name)
		}
	}
	if _, err := readEnv(env("RATELIMIT_RULES_FILE=rules.yaml", "CONFIG_TYPE=GRPC_XDS_SOTW")); err == nil || !strings.Contains(err.Error(), "RATELIMIT_RULES_FILE") || !strings.Contains(err.Error(), "GRPC_XDS_SOTW") {
		t.Errorf("a rules file with xDS: %v, want an error naming both", err)
	}
	for _, kv := range []string{"REDIS_TYPE=SINGLE", "CONFIG_TYPE=FILE", "CONFIG_TYPE=grpc_xds_sotw", "BACKEND_TYPE=redis", "GRPC_SERVER_USE_TLS=false", "REDIS_SOCKET_TYPE=unix"} {
		if _, err := readEnv(env(kv)); err != nil {
			t.Errorf("%s: %v", kv, err)
		}
	}
}

// TestRuntimeRootDefault: with REDIS_URL, an unset RUNTIME_ROOT is the
// reference's /srv/runtime_data/current (RUNTIME_SUBDIRECTORY has no
// default); the example serves only without REDIS_URL and RUNTIME_ROOT,
// and a rules file takes no runtime directory.
func TestRuntimeRootDefault(t *testing.T) {
	for _, c := range []struct {
		vars []string
		want string
	}{
		{[]string{"REDIS_URL=127.0.0.1:6379"}, "/srv/runtime_data/current/config"},
		{[]string{"REDIS_URL=127.0.0.1:6379", "RUNTIME_SUBDIRECTORY=rl", "RUNTIME_APPDIRECTORY=app"}, "/srv/runtime_data/current/rl/app"},
		{[]string{"REDIS_URL=127.0.0.1:6379", "RUNTIME_ROOT=/data"}, "/data/config"},
		{[]string{"REDIS_URL=127.0.0.1:6379", "RATELIMIT_RULES_FILE=rules.yaml"}, ""},
		{[]string{"RUNTIME_ROOT=/data", "RUNTIME_SUBDIRECTORY=rl"}, "/data/rl/config"},
		{nil, ""},
	} {
		s, err := readEnv(env(c.vars...))
		if err != nil {
			t.Fatalf("%v: %v", c.vars, err)
		}
		if s.configDir != c.want {
			t.Errorf("%v: runtime directory %q, want %q", c.vars, s.configDir, c.want)
		}
	}
}

// TestPortsAreNumbers: GRPC_PORT, PORT and DEBUG_PORT are port numbers,
// as the reference reads them; anything else stops the server at start
// naming the variable, rather than listen where a service name such as
// "http" leads (port 80) or fail later with a resolver's message.
func TestPortsAreNumbers(t *testing.T) {
	for _, name := range []string{"GRPC_PORT", "PORT", "DEBUG_PORT"} {
		for _, bad := range []string{"http", " 80", "80 ", "-1", "65536", "8080x", "0x1f90"} {
			if _, err := readEnv(env(name + "=" + bad)); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: %v, want an error naming %s", name, bad, err, name)
			}
		}
		for _, good := range []string{"0", "8081", "65535"} {
			if _, err := readEnv(env(name + "=" + good)); err != nil {
				t.Errorf("%s=%s: %v", name, good, err)
			}
		}
	}
	if s, err := readEnv(func(string) string { return "" }); err != nil || s.grpcAddr != "0.0.0.0:8081" || s.httpAddr != "0.0.0.0:8080" || s.debugAddr != "0.0.0.0:6070" {
		t.Errorf("defaults: %s %s %s, %v; want 0.0.0.0:8081, :8080, :6070", s.grpcAddr, s.httpAddr, s.debugAddr, err)
	}
}
