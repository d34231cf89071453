package main

import (
	"crypto/tls"
	"log/slog"
	"os"
	"sync"
)

// certFiles serves the certificate of a certificate file and a key file,
// loaded again at the first handshake after either changes (a rotation,
// a Kubernetes Secret's symlink swap), as the reference reloads its own.
// A pair that does not load (a rotation half written) is logged, and the
// certificate in force is kept until the files change again.
type certFiles struct {
	certFile, keyFile string

	mu   sync.Mutex
	seen [2]fileStamp // the files when last loaded
	cert *tls.Certificate
}

// fileStamp tells a file's versions apart, after every symlink.
type fileStamp struct {
	size, mod int64 // mod: the modification time in Unix ns
}

// stamp is the files' current stamps; a file that cannot be read has the
// zero stamp.
func (c *certFiles) stamp() [2]fileStamp {
	var s [2]fileStamp
	for i, name := range []string{c.certFile, c.keyFile} {
		if fi, err := os.Stat(name); err == nil {
			s[i] = fileStamp{fi.Size(), fi.ModTime().UnixNano()}
		}
	}
	return s
}

// get is a tls.Config's GetCertificate.
func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	now := c.stamp()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now != c.seen {
		c.seen = now
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			slog.Warn("ratelimit: GRPC_SERVER_TLS_CERT, GRPC_SERVER_TLS_KEY changed and do not load; serving the previous certificate", "err", err)
			return c.cert, nil
		}
		c.cert = &cert
	}
	return c.cert, nil
}
