package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGRPCTLSFileErrors: a TLS setting that cannot be honoured stops the
// server at start, naming its variable.
func TestGRPCTLSFileErrors(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	on := "GRPC_SERVER_USE_TLS=true"
	for _, c := range []struct {
		name string
		vars []string
	}{
		{"GRPC_SERVER_TLS_CERT", []string{on}},
		{"GRPC_SERVER_TLS_KEY", []string{on, "GRPC_SERVER_TLS_CERT=" + notPEM}},
		{"GRPC_SERVER_TLS_CERT", []string{on, "GRPC_SERVER_TLS_CERT=" + missing, "GRPC_SERVER_TLS_KEY=" + missing}},
		{"GRPC_SERVER_TLS_CERT", []string{on, "GRPC_SERVER_TLS_CERT=" + notPEM, "GRPC_SERVER_TLS_KEY=" + notPEM}},
		{"GRPC_SERVER_USE_TLS", []string{"GRPC_SERVER_USE_TLS=yes please"}},
		{"GRPC_CLIENT_TLS_SAN", []string{on, "GRPC_CLIENT_TLS_SAN=envoy"}},
	} {
		_, err := readEnv(env(c.vars...))
		if err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%v: %v, want an error naming %s", c.vars, err, c.name)
		}
	}
	for _, c := range []struct{ name, value string }{{"GRPC_CLIENT_TLS_CACERT", missing}, {"GRPC_CLIENT_TLS_CACERT", notPEM}} {
		for _, withSystem := range []bool{false, true} {
			_, err := caPool(env(c.name+"="+c.value), c.name, withSystem)
			if err == nil || !strings.Contains(err.Error(), c.name) {
				t.Errorf("%s=%s (system roots %v): %v, want an error naming it", c.name, c.value, withSystem, err)
			}
		}
	}
}

// TestGRPCTLSOff: without GRPC_SERVER_USE_TLS=true the port serves plain
// text, and the TLS variables set are warned about.
func TestGRPCTLSOff(t *testing.T) {
	s, err := readEnv(env("GRPC_SERVER_TLS_CERT=/nowhere/cert.pem", "GRPC_CLIENT_TLS_SAN=envoy"))
	if err != nil {
		t.Fatal(err)
	}
	if s.grpcTLS != nil || len(s.unhonoured) != 2 || !strings.Contains(strings.Join(s.unhonoured, "\n"), "GRPC_CLIENT_TLS_SAN: GRPC_SERVER_USE_TLS is not true") {
		t.Fatalf("TLS %v, warnings %q", s.grpcTLS != nil, s.unhonoured)
	}
}
