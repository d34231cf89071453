package main_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// tlsServer starts the server on miniredis with TLS on its gRPC port, a
// certificate for 127.0.0.1 of a CA it returns, and env.
func tlsServer(t *testing.T, env ...string) (string, *testCA) {
	t.Helper()
	ca := newCA(t, "server-ca")
	cert, key := ca.issue(t, "server", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	cmd, p, rest := start(t, build(t), append([]string{"REDIS_URL=", "RUNTIME_ROOT=",
		"GRPC_SERVER_USE_TLS=true", "GRPC_SERVER_TLS_CERT=" + cert, "GRPC_SERVER_TLS_KEY=" + key}, env...)...)
	t.Cleanup(func() { stop(t, cmd, rest) })
	return p.grpc, ca
}

// answered says whether the server at addr answers a call over creds.
func answered(t *testing.T, addr string, creds credentials.TransportCredentials) bool {
	t.Helper()
	res, err := ask(addr, creds, "example", "remote_address", "10.0.0.1")
	if err != nil {
		t.Logf("not answered: %v", err)
		return false
	}
	if res.OverallCode != rlsv3.RateLimitResponse_OK {
		t.Fatalf("answered %v, want OK", res)
	}
	return true
}

func TestGRPCTLS(t *testing.T) {
	addr, ca := tlsServer(t)
	if !answered(t, addr, credentials.NewTLS(&tls.Config{RootCAs: ca.pool()})) {
		t.Fatal("a TLS client was not answered")
	}
	if answered(t, addr, insecure.NewCredentials()) {
		t.Fatal("a plain-text client was answered")
	}
}

// TestGRPCTLSRotation: a certificate and key rotated in place (renamed
// over the old files) are served from the next handshake on.
func TestGRPCTLSRotation(t *testing.T) {
	ca, next := newCA(t, "server-ca"), newCA(t, "next-ca")
	cert, key := ca.issue(t, "server", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT=",
		"GRPC_SERVER_USE_TLS=true", "GRPC_SERVER_TLS_CERT="+cert, "GRPC_SERVER_TLS_KEY="+key)
	defer stop(t, cmd, rest)
	trusting := func(ca *testCA) credentials.TransportCredentials {
		return credentials.NewTLS(&tls.Config{RootCAs: ca.pool()})
	}
	if !answered(t, p.grpc, trusting(ca)) || answered(t, p.grpc, trusting(next)) {
		t.Fatal("before the rotation, the first certificate is not the one served")
	}
	newCert, newKey := next.issue(t, "server", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	for _, f := range [][2]string{{newKey, key}, {newCert, cert}} {
		if err := os.Rename(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if !answered(t, p.grpc, trusting(next)) || answered(t, p.grpc, trusting(ca)) {
		t.Fatal("after the rotation, the new certificate is not the one served")
	}
}

// TestGRPCMutualTLS: with GRPC_CLIENT_TLS_CACERT and GRPC_CLIENT_TLS_SAN,
// only a client certificate of that CA, valid for that name, is
// answered.
func TestGRPCMutualTLS(t *testing.T) {
	clients, other := newCA(t, "client-ca"), newCA(t, "other-ca")
	addr, ca := tlsServer(t, "GRPC_CLIENT_TLS_CACERT="+clients.file, "GRPC_CLIENT_TLS_SAN=envoy.example")
	// with presents cert whatever CAs the server asks for (a Go client
	// would otherwise send none of another CA).
	with := func(cert tls.Certificate) credentials.TransportCredentials {
		return credentials.NewTLS(&tls.Config{RootCAs: ca.pool(),
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }})
	}
	client := func(ca *testCA, san string) tls.Certificate {
		cert, key := ca.issue(t, "client-"+san, x509.ExtKeyUsageClientAuth, san)
		return pair(t, cert, key)
	}
	for _, c := range []struct {
		name  string
		creds credentials.TransportCredentials
	}{
		{"no client certificate", with(tls.Certificate{})},
		{"a certificate of another CA", with(client(other, "envoy.example"))},
		{"a certificate for another name", with(client(clients, "other.example"))},
		{"plain text", insecure.NewCredentials()},
	} {
		if answered(t, addr, c.creds) {
			t.Errorf("%s: answered", c.name)
		}
	}
	if !answered(t, addr, with(client(clients, "envoy.example"))) {
		t.Fatal("the client CA's certificate for GRPC_CLIENT_TLS_SAN was not answered")
	}
}
