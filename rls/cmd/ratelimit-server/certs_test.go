package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a certificate authority a test makes, its certificate in the
// PEM file file.
type testCA struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

// newCA makes a CA named name, its files in a temporary directory.
func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	ca := &testCA{dir: t.TempDir()}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	ca.cert, ca.key = ca.sign(t, tmpl)
	ca.file = ca.write(t, name, "CERTIFICATE", ca.cert.Raw)
	return ca
}

// issue makes a certificate for usage signed by ca, valid for the names
// sans (IP addresses or DNS names), and returns its certificate and key
// files.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage, sans ...string) (certFile, keyFile string) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	for _, san := range sans {
		if ip := net.ParseIP(san); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, san)
		}
	}
	cert, key := ca.sign(t, tmpl)
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return ca.write(t, name, "CERTIFICATE", cert.Raw), ca.write(t, name+"-key", "EC PRIVATE KEY", der)
}

// pair loads the certificate and key files of issue.
func pair(t *testing.T, certFile, keyFile string) tls.Certificate {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// pool is a pool of ca's certificate.
func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// sign makes a fresh key and tmpl's certificate for it, valid for an
// hour, signed by ca (self-signed while ca has no certificate yet).
func (ca *testCA) sign(t *testing.T, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	parent, signer := tmpl, key
	if ca.cert != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// write writes der as a PEM block of type typ to ca's name.pem.
func (ca *testCA) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	file := filepath.Join(ca.dir, name+".pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
