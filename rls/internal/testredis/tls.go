package testredis

import (
	"strconv"
	"testing"
)

// StartTLS starts a redis-server as StartServer does, serving TLS only on
// its address with the certificate and key of the PEM files certFile and
// keyFile; clients must present a certificate signed by a CA of caFile
// (unless args say "--tls-auth-clients", "no").
func StartTLS(t testing.TB, certFile, keyFile, caFile string, args ...string) *Server {
	t.Helper()
	port := freePort(t, 0)
	return startOn(t, port, "", append([]string{"--port", "0", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile}, args...)...)
}
