package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// grpcTLSVars are the variables that configure TLS on the gRPC port; they
// count only with GRPC_SERVER_USE_TLS=true.
var grpcTLSVars = []string{"GRPC_SERVER_TLS_CERT", "GRPC_SERVER_TLS_KEY", "GRPC_CLIENT_TLS_CACERT", "GRPC_CLIENT_TLS_SAN"}

// grpcTLS is the gRPC port's TLS configuration, or nil without
// GRPC_SERVER_USE_TLS=true: the certificate GRPC_SERVER_TLS_CERT and its
// key GRPC_SERVER_TLS_KEY, read again once they change (certfiles.go);
// with GRPC_CLIENT_TLS_CACERT, clients must present a certificate signed
// by a CA of that file (and by no other), and with GRPC_CLIENT_TLS_SAN
// too, one that is valid for that name (a DNS name, or an IP address),
// as the reference checks it.
func grpcTLS(getenv func(string) string) (*tls.Config, error) {
	on, err := boolean(getenv, "GRPC_SERVER_USE_TLS")
	if err != nil || !on {
		return nil, err
	}
	san := getenv("GRPC_CLIENT_TLS_SAN")
	if san != "" && getenv("GRPC_CLIENT_TLS_CACERT") == "" {
		// The reference checks the name only on a certificate it verified.
		return nil, errors.New("ratelimit: GRPC_CLIENT_TLS_SAN needs GRPC_CLIENT_TLS_CACERT: a client's name is checked on a certificate signed by it")
	}
	files := &certFiles{certFile: getenv("GRPC_SERVER_TLS_CERT"), keyFile: getenv("GRPC_SERVER_TLS_KEY")}
	files.seen = files.stamp() // before reading: a change meanwhile is read at the first handshake
	if files.cert, err = keyPair(getenv, "GRPC_SERVER_TLS_CERT", "GRPC_SERVER_TLS_KEY"); err != nil {
		return nil, err
	}
	if files.cert == nil {
		return nil, errors.New("ratelimit: GRPC_SERVER_USE_TLS=true needs GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY")
	}
	cfg := &tls.Config{GetCertificate: files.get, MinVersion: tls.VersionTLS12}
	if cfg.ClientCAs, err = caPool(getenv, "GRPC_CLIENT_TLS_CACERT", false); err != nil {
		return nil, err
	}
	if cfg.ClientCAs != nil {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if san != "" {
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
				return errors.New("ratelimit: no verified client certificate")
			}
			return cs.VerifiedChains[0][0].VerifyHostname(san)
		}
	}
	return cfg, nil
}

// keyPair reads the certificate chain of the file certVar names and its
// private key from the file keyVar names; nil when neither is set.
func keyPair(getenv func(string) string, certVar, keyVar string) (*tls.Certificate, error) {
	certFile, keyFile := getenv(certVar), getenv(keyVar)
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, fmt.Errorf("ratelimit: %s is set, %s is not", keyVar, certVar)
	case keyFile == "":
		return nil, fmt.Errorf("ratelimit: %s is set, %s is not", certVar, keyVar)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: %s, %s: %w", certVar, keyVar, err)
	}
	return &cert, nil
}

// caPool is the pool of the PEM certificates in the file caVar names,
// added to the system's roots when withSystem is true; nil when it is
// not set.
func caPool(getenv func(string) string, caVar string, withSystem bool) (*x509.CertPool, error) {
	file := getenv(caVar)
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: %s: %w", caVar, err)
	}
	pool := x509.NewCertPool()
	if withSystem {
		if system, err := x509.SystemCertPool(); err == nil {
			pool = system
		}
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ratelimit: %s: %s holds no PEM certificate", caVar, file)
	}
	return pool, nil
}
