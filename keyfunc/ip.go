package keyfunc

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/netx"
)

// Default prefix lengths of an IP identity: whole IPv4 addresses, and IPv6
// addresses grouped by /64, since one host usually owns a whole /64 and
// could otherwise rotate addresses for free.
const (
	defaultIPv4PrefixLen = 32
	defaultIPv6PrefixLen = 64
)

// IPConfig configures how the client address is found and grouped.
type IPConfig struct {
	// TrustedProxies lists the peers whose forwarding headers are believed,
	// as CIDRs ("10.0.0.0/8") or addresses ("127.0.0.1"). With none, all
	// forwarding headers are ignored and the TCP peer is the client.
	TrustedProxies []string
	// IPv4PrefixLen is how many leading bits of an IPv4 address form the
	// identity: 1 to 32, 0 for 32 (the whole address).
	IPv4PrefixLen int
	// IPv6PrefixLen is the same for IPv6: 1 to 128, 0 for 64 (one host
	// usually owns a whole /64).
	IPv6PrefixLen int
}

// IPResolver finds a request's client address. It is safe for concurrent use.
//
// Trust model: the TCP peer (RemoteAddr) is the client unless it is a trusted
// proxy. Then the forwarding chain is read from the right: the Forwarded
// header (RFC 7239 "for=") if present, else X-Forwarded-For, else
// X-Real-IP. Each hop that is itself a trusted proxy is skipped; the first
// untrusted address is the client. A malformed, obfuscated or "unknown" hop
// ends the walk at the last trusted address seen, since nothing to its left
// can be believed; a chain of only trusted proxies yields its left-most hop.
// Spoofed entries a client adds sit left of the address its first proxy
// appends, so they are never reached.
type IPResolver struct {
	trusted []netip.Prefix
	v4, v6  int
}

var defaultResolver = &IPResolver{v4: defaultIPv4PrefixLen, v6: defaultIPv6PrefixLen}

// IP keys requests by the TCP peer address, IPv6 grouped by /64, ignoring
// every forwarding header. Behind a proxy, use ClientIP with the proxy listed.
func IP() KeyFunc { return defaultResolver.Key }

// ClientIP keys requests by the client address that cfg resolves, masked
// to the configured prefix lengths.
//
// Which address: the TCP peer (RemoteAddr) is the client unless it lies in
// cfg.TrustedProxies. Only then are forwarding headers read, in this
// order, the first present winning: Forwarded (RFC 7239, its for=
// parameters), else X-Forwarded-For, else X-Real-IP (its last value). The
// chain is walked from the right, skipping hops that are themselves
// trusted proxies; the first untrusted address is the client. Headers sent
// by an untrusted peer are never read, so a client cannot choose its own
// identity. See IPResolver for malformed and all-trusted chains.
func ClientIP(cfg IPConfig) (KeyFunc, error) {
	res, err := NewIPResolver(cfg)
	if err != nil {
		return nil, err
	}
	return res.Key, nil
}

// NewIPResolver validates cfg.
func NewIPResolver(cfg IPConfig) (*IPResolver, error) {
	res := &IPResolver{v4: cfg.IPv4PrefixLen, v6: cfg.IPv6PrefixLen}
	if res.v4 == 0 {
		res.v4 = defaultIPv4PrefixLen
	}
	if res.v6 == 0 {
		res.v6 = defaultIPv6PrefixLen
	}
	if res.v4 < 1 || res.v4 > 32 {
		return nil, fmt.Errorf("%w: IPv4PrefixLen must be 1 to 32, got %d", ratelimit.ErrConfig, cfg.IPv4PrefixLen)
	}
	if res.v6 < 1 || res.v6 > 128 {
		return nil, fmt.Errorf("%w: IPv6PrefixLen must be 1 to 128, got %d", ratelimit.ErrConfig, cfg.IPv6PrefixLen)
	}
	for _, s := range cfg.TrustedProxies {
		p, err := netx.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%w: TrustedProxies: %w", ratelimit.ErrConfig, err)
		}
		res.trusted = append(res.trusted, p)
	}
	return res, nil
}

// Key returns the client address, masked to the configured prefix length:
// "192.0.2.7", or "2001:db8:1:2::/64". It is a KeyFunc.
func (res *IPResolver) Key(r *http.Request) (string, error) {
	a, err := res.ClientAddr(r)
	if err != nil {
		return "", err
	}
	bits := res.v6
	if a.Is4() {
		bits = res.v4
	}
	if bits == a.BitLen() {
		return a.String(), nil
	}
	return netip.PrefixFrom(a, bits).Masked().String(), nil
}

// ClientAddr returns the client's full address (see IPResolver for the trust
// model). It fails only when RemoteAddr is not an IP address.
func (res *IPResolver) ClientAddr(r *http.Request) (netip.Addr, error) {
	peer, ok := parseHost(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%w: RemoteAddr %q is not an IP address", ErrNoKey, r.RemoteAddr)
	}
	if !res.isTrusted(peer) {
		return peer, nil
	}
	if v := r.Header.Values("Forwarded"); len(v) > 0 {
		return res.walk(v, forwardedFor, peer), nil
	}
	if v := r.Header.Values("X-Forwarded-For"); len(v) > 0 {
		return res.walk(v, parseHost, peer), nil
	}
	if v := r.Header.Values("X-Real-Ip"); len(v) > 0 {
		return res.walk(v[len(v)-1:], parseHost, peer), nil
	}
	return peer, nil
}

func (res *IPResolver) isTrusted(a netip.Addr) bool {
	for _, p := range res.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// walk reads comma-separated hops from the right of the header values and
// returns the first untrusted one, or the last trusted one seen.
func (res *IPResolver) walk(values []string, parse func(string) (netip.Addr, bool), last netip.Addr) netip.Addr {
	for i := len(values) - 1; i >= 0; i-- {
		rest := values[i]
		for done := false; !done; {
			hop := rest
			if j := strings.LastIndexByte(rest, ','); j >= 0 {
				hop, rest = rest[j+1:], rest[:j]
			} else {
				done = true
			}
			a, ok := parse(strings.TrimSpace(hop))
			if !ok {
				return last
			}
			if !res.isTrusted(a) {
				return a
			}
			last = a
		}
	}
	return last
}

// forwardedFor parses the for= parameter of one RFC 7239 element.
func forwardedFor(element string) (netip.Addr, bool) {
	for param := range strings.SplitSeq(element, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(param), "=")
		if ok && strings.EqualFold(name, "for") {
			return parseHost(value)
		}
	}
	return netip.Addr{}, false
}

// parseHost parses an address with an optional port, brackets, quotes and
// zone: 192.0.2.1, 192.0.2.1:80, 2001:db8::1, [2001:db8::1]:80,
// "[fe80::1%eth0]". The zone is dropped and IPv4-mapped IPv6 unmapped.
func parseHost(s string) (netip.Addr, bool) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Addr{}, false
		}
		if tail := s[end+1:]; tail != "" && !validPort(tail) {
			return netip.Addr{}, false
		}
		s = s[1:end]
	} else if strings.Count(s, ":") == 1 {
		host, port, _ := strings.Cut(s, ":")
		if !validPort(":" + port) {
			return netip.Addr{}, false
		}
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// validPort reports whether s is ":" and 1 to 5 digits.
func validPort(s string) bool {
	if len(s) < 2 || len(s) > 6 || s[0] != ':' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
