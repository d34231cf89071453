package keyfunc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// unixServer serves key on a Unix socket, as a server behind a proxy on
// the same host is served (nginx's proxy_pass http://unix:..., an Envoy
// sidecar), and returns a client of it: each answer is the key, or "no
// key: " and the error.
func unixServer(t *testing.T, key keyfunc.KeyFunc) *http.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "rl") // short: a socket's path has a small limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, err := key(r)
		if err != nil {
			fmt.Fprintf(w, "no key: %v", err)
			return
		}
		io.WriteString(w, k)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// ask sends a request with the forwarding field name set to value ("" for
// none) through c, and returns the answer.
func ask(t *testing.T, c *http.Client, name, value string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://proxy/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if value != "" {
		req.Header.Set(name, value)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUnixSocketProxy: a proxy that reaches the server over a Unix socket
// has no IP address. Listed as "unix" among the trusted proxies, it is
// trusted as a proxy listed by address is: the field it sets names the
// client. Unlisted, its requests have no identity, and the error says
// what to list; a trusted one that sends no usable field gives none
// either, never the socket's name.
func TestUnixSocketProxy(t *testing.T) {
	trusted, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"unix", "10.0.0.0/8"}, Header: "X-Forwarded-For"})
	if err != nil {
		t.Fatal(err)
	}
	c := unixServer(t, trusted)
	for _, tc := range []struct{ xff, want string }{
		{"203.0.113.9", "203.0.113.9"},
		{"198.51.100.7, 10.1.2.3", "198.51.100.7"}, // a trusted hop skipped
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
	} {
		if got := ask(t, c, "X-Forwarded-For", tc.xff); got != tc.want {
			t.Errorf("trusted Unix peer, X-Forwarded-For %q: got %q, want %q", tc.xff, got, tc.want)
		}
	}
	for _, xff := range []string{"", "unknown", "10.1.2.3"} {
		got := ask(t, c, "X-Forwarded-For", xff)
		if xff == "10.1.2.3" {
			if got != "10.1.2.3" { // a chain of only trusted proxies: its left-most hop
				t.Errorf("trusted Unix peer, X-Forwarded-For %q: got %q, want 10.1.2.3", xff, got)
			}
			continue
		}
		if !strings.HasPrefix(got, "no key: ") || !strings.Contains(got, "Unix socket") {
			t.Errorf("trusted Unix peer, X-Forwarded-For %q: got %q, want no key, saying the peer is on a Unix socket", xff, got)
		}
	}

	for name, key := range map[string]keyfunc.KeyFunc{"IP": keyfunc.IP(), "ClientIP without unix": mustClientIP(t, keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8"}})} {
		got := ask(t, unixServer(t, key), "X-Forwarded-For", "203.0.113.9")
		if !strings.HasPrefix(got, "no key: ") || !strings.Contains(got, `"unix"`) {
			t.Errorf("%s, untrusted Unix peer: got %q, want no key, naming the \"unix\" entry", name, got)
		}
	}
}

func mustClientIP(t *testing.T, cfg keyfunc.IPConfig) keyfunc.KeyFunc {
	t.Helper()
	k, err := keyfunc.ClientIP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestUnixPeerErrors: a request from a Unix socket has no identity
// (ErrNoKey) when no "unix" entry trusts its peer, or when the trusted
// peer sends no usable forwarding field; the error never carries the
// socket's name.
func TestUnixPeerErrors(t *testing.T) {
	for _, peer := range []string{"@", "@abstract", "/run/proxy.sock"} {
		_, err := keyfunc.IP()(request(peer, "X-Real-IP", "203.0.113.9"))
		if !errors.Is(err, keyfunc.ErrNoKey) || !strings.Contains(err.Error(), `"unix"`) || strings.Contains(err.Error(), peer) {
			t.Errorf("untrusted peer %q: got %v, want ErrNoKey naming the \"unix\" entry, without the peer's name", peer, err)
		}
		_, err = mustClientIP(t, keyfunc.IPConfig{TrustedProxies: []string{"UNIX"}})(request(peer))
		if !errors.Is(err, keyfunc.ErrNoKey) || strings.Contains(err.Error(), peer) {
			t.Errorf("trusted peer %q without a forwarding field: got %v, want ErrNoKey, without the peer's name", peer, err)
		}
	}
}
