// Package netx parses the address forms the configuration accepts.
package netx

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParsePrefix parses a CIDR or a single address (as a /32 or /128).
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if p.Addr().Is4In6() {
			return netip.Prefix{}, fmt.Errorf("%q: write IPv4-mapped prefixes as IPv4", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// UnixPeers is the entry of a list of trusted proxies that trusts every
// peer connected over a Unix domain socket (a proxy on the same host: an
// nginx proxy_pass to a socket, a sidecar), which has no IP address to
// list.
const UnixPeers = "unix"

// ParseProxy parses an entry of a list of trusted proxies: a CIDR or an
// address (ParsePrefix), or UnixPeers, in any case (unix true).
func ParseProxy(s string) (p netip.Prefix, unix bool, err error) {
	if strings.EqualFold(s, UnixPeers) {
		return netip.Prefix{}, true, nil
	}
	p, err = ParsePrefix(s)
	return p, false, err
}

// IsUnixPeer reports whether peer, a server's text of a connection's
// remote address (http.Request.RemoteAddr, a gRPC peer's Addr.String()),
// is that of a Unix domain socket: "@" for an unnamed one (what Go gives
// for a client that did not bind a name), else an abstract name ("@name")
// or a path.
func IsUnixPeer(peer string) bool {
	return peer != "" && (peer[0] == '@' || peer[0] == '/')
}
