package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

func TestXDSEnvDefaults(t *testing.T) {
	s, err := readEnv(env("CONFIG_TYPE=GRPC_XDS_SOTW"))
	if err != nil {
		t.Fatal(err)
	}
	x := s.xds
	if x == nil || x.serverURL != "localhost:18000" || x.node.GetId() != "default" || len(x.node.GetMetadata().GetFields()) != 0 ||
		x.retry != 3*time.Second || x.maxRetry != time.Minute || x.maxMsgSize != 0 || x.tls != nil || len(x.headers) != 0 {
		t.Fatalf("defaults: %+v", x)
	}
	if s, err := readEnv(env("CONFIG_TYPE=FILE", "FORCE_START_WITHOUT_INITIAL_CONFIG=true")); err != nil || s.xds != nil || !s.forceStart || len(s.unhonoured) != 0 {
		t.Fatalf("CONFIG_TYPE=FILE: %+v, %v, %q; want no xDS and FORCE_START_WITHOUT_INITIAL_CONFIG honoured", s.xds, err, s.unhonoured)
	}
	if s, err := readEnv(env("RATELIMIT_RULES_FILE=rules.yaml", "FORCE_START_WITHOUT_INITIAL_CONFIG=true")); err != nil || len(s.unhonoured) != 1 ||
		!strings.HasPrefix(s.unhonoured[0], "FORCE_START_WITHOUT_INITIAL_CONFIG:") {
		t.Fatalf("a rules file: %v, %q; want FORCE_START_WITHOUT_INITIAL_CONFIG not honoured", err, s.unhonoured)
	}
	if s, err := readEnv(env("CONFIG_TYPE=GRPC_XDS_SOTW", "FORCE_START_WITHOUT_INITIAL_CONFIG=true", "USE_STATSD=false")); err != nil || !s.xds.forceStart ||
		len(s.unhonoured) != 1 || !strings.HasPrefix(s.unhonoured[0], "USE_STATSD:") {
		t.Fatalf("CONFIG_TYPE=GRPC_XDS_SOTW: %+v, %v, %q; want FORCE_START_WITHOUT_INITIAL_CONFIG honoured", s.xds, err, s.unhonoured)
	}
	s, err = readEnv(env("CONFIG_TYPE=GRPC_XDS_SOTW", "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL=2m", "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES=8388608"))
	if err != nil || s.xds.retry != 2*time.Minute || s.xds.maxRetry != 2*time.Minute || s.xds.maxMsgSize != 8<<20 {
		t.Fatalf("a retry above the maximum, a message size: %+v, %v", s.xds, err)
	}
}

func TestXDSEnvRefusals(t *testing.T) {
	for _, kv := range []string{"CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL=3", "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL=-1s",
		"XDS_CLIENT_BACKOFF_MAX_INTERVAL=0s", "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES=big", "CONFIG_GRPC_XDS_SERVER_USE_TLS=maybe", "FORCE_START_WITHOUT_INITIAL_CONFIG=maybe",
		"CONFIG_GRPC_XDS_CLIENT_TLS_CERT=/nonexistent/tls.crt", "CONFIG_GRPC_XDS_SERVER_TLS_CACERT=/nonexistent/ca.crt"} {
		name, _, _ := strings.Cut(kv, "=")
		_, err := readEnv(env("CONFIG_TYPE=GRPC_XDS_SOTW", "CONFIG_GRPC_XDS_SERVER_USE_TLS=true", kv))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming %s", kv, err, name)
		}
	}
}

// testPKI writes a CA, a certificate of the name "xds.test" signed by it
// for the xDS server and one for its client into a temporary directory,
// and returns the directory and the server's TLS configuration, which
// requires a client certificate of the CA.
func testPKI(t *testing.T) (string, *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.crt", "CERTIFICATE", caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage, dns ...string) (tls.Certificate, []byte, []byte) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"}, DNSNames: dns,
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, der, kder
	}
	server, _, _ := leaf(2, x509.ExtKeyUsageServerAuth, "xds.test")
	_, cder, ckey := leaf(3, x509.ExtKeyUsageClientAuth)
	write("tls.crt", "CERTIFICATE", cder)
	write("tls.key", "PRIVATE KEY", ckey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return dir, &tls.Config{Certificates: []tls.Certificate{server}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

// TestXDSOverTLS takes a version from an xDS server that requires the
// client's certificate, verified as the name CONFIG_GRPC_XDS_SERVER_TLS_SAN
// gives; without that name the server's certificate is refused.
func TestXDSOverTLS(t *testing.T) {
	dir, serverTLS := testPKI(t)
	cache := cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(serverTLS)))
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(gs, serverv3.NewServer(context.Background(), cache, nil))
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	x := &xdsServer{cache: cache}
	x.set(t, "1", perDayConfig("mine-limits", 3))

	vars := []string{"CONFIG_TYPE=GRPC_XDS_SOTW", "CONFIG_GRPC_XDS_SERVER_URL=" + ln.Addr().String(), "CONFIG_GRPC_XDS_NODE_ID=" + xdsNode,
		"CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL=20ms", "CONFIG_GRPC_XDS_SERVER_USE_TLS=true",
		"CONFIG_GRPC_XDS_CLIENT_TLS_CERT=" + filepath.Join(dir, "tls.crt"), "CONFIG_GRPC_XDS_CLIENT_TLS_KEY=" + filepath.Join(dir, "tls.key"),
		"CONFIG_GRPC_XDS_SERVER_TLS_CACERT=" + filepath.Join(dir, "ca.crt")}
	st := testStore(t)
	start := func(ctx context.Context, vars []string, logs *syncBuffer) (*service, func()) {
		s, err := readEnv(env(vars...))
		if err != nil {
			t.Fatal(err)
		}
		log := slog.New(slog.NewTextHandler(logs, nil))
		svc, stop, err := startXDS(ctx, *s.xds, func(configs []*rls.Config) (*service, error) {
			return newService(st, rls.Options{}, "", func() ([]*rls.Config, error) { return configs, nil }, log)
		}, log)
		if err != nil {
			t.Fatal(err)
		}
		return svc, stop
	}

	// Without the SAN, the certificate (of xds.test) does not match the
	// address (127.0.0.1): no version arrives, and the failure is logged.
	var refused syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan *service, 1)
	go func() { svc, _ := start(ctx, vars, &refused); returned <- svc }()
	waitFor(t, "the refused certificate logged", func() bool { return strings.Contains(refused.String(), "failed to verify certificate") })
	cancel()
	if svc := <-returned; svc != nil {
		t.Fatal("served a version over a connection to a server of another name")
	}

	var logs syncBuffer
	svc, stop := start(context.Background(), append(vars, "CONFIG_GRPC_XDS_SERVER_TLS_SAN=xds.test"), &logs)
	t.Cleanup(func() { stop(); _ = svc.close() })
	if !inForce(svc, "3") {
		t.Fatalf("version 1 is not in force:\n%s", logs.String())
	}
}
