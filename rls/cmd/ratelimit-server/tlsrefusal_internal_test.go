package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"testing"
	"time"
)

// TestTLSRefusalReadsTheAlert: a server that refuses the client's
// certificate (TLS 1.3: after the handshake is over for the client) is
// found out by a connection that only reads, whatever a ping met first;
// a server that takes the client says nothing, and nothing is reported.
func TestTLSRefusalReadsTheAlert(t *testing.T) {
	for _, tc := range []struct {
		auth    tls.ClientAuthType
		refused bool
	}{{tls.RequireAnyClientCert, true}, {tls.NoClientCert, false}} {
		addr := tlsServer(t, tc.auth)
		c := redisConn{typ: "single", tls: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}}
		err := c.tlsRefusal(context.Background(), "tcp", addr)
		if refused := err != nil; refused != tc.refused || refused && !isTLSFailure(err) {
			t.Errorf("client auth %v: %v, want refused %v", tc.auth, err, tc.refused)
		}
	}
}

// tlsServer serves TLS 1.3 on a loopback port with a self-signed
// certificate, asking for client certificates as auth says, and holds
// each connection open without a word, as Redis does.
func tlsServer(t *testing.T, auth tls.ClientAuthType) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{MinVersion: tls.VersionTLS13, ClientAuth: auth,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if conn.(*tls.Conn).Handshake() == nil {
					_, _ = conn.Read(make([]byte, 1)) // silent until the client goes
				}
			}()
		}
	}()
	return ln.Addr().String()
}
