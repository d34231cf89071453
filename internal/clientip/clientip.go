// Package clientip finds a request's client address: the TCP peer, or,
// when the peer is a trusted proxy, the right-most untrusted hop of its
// forwarding headers. Package keyfunc documents the trust model; this
// package implements it for keyfunc (and, through keyfunc.ClientIPOf, for
// grpclimit's calls) and middleware.
package clientip

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/netx"
)

// ErrNoAddr is returned when RemoteAddr is not an IP address.
var ErrNoAddr = errors.New("RemoteAddr is not an IP address")

// Errors of a peer on a Unix domain socket, which has no IP address: one
// whose forwarding fields are not believed (the error says what to list,
// for the operator who reads it in the error handler or the log), and one
// that is trusted but sent no usable field.
var (
	errUnixPeer      = errors.New(`the peer is on a Unix socket, which has no IP address: list "unix" among the trusted proxies to read the forwarding field its proxy sets`)
	errUnixForwarded = errors.New("the peer, a trusted proxy on a Unix socket, sent no usable forwarding field")
)

// Resolver finds a request's client address. It is safe for concurrent use.
//
// The TCP peer (RemoteAddr) is the client unless it is a trusted proxy.
// Then the forwarding chain is read from the right: from the one field
// the resolver was told the proxies set, or, told none, from the
// Forwarded header (RFC 7239 "for=") if present, else X-Forwarded-For,
// else X-Real-IP. Told none, a field the proxies pass through as the
// client sent it can win over the one they set: the client then chooses
// its address. Each hop that is itself a trusted proxy is skipped; the
// first untrusted address is the client. A malformed, obfuscated or
// "unknown" hop ends the walk at the last trusted address seen, since
// nothing to its left can be believed; a chain of only trusted proxies
// yields its left-most hop.
type Resolver struct {
	trusted []netip.Prefix
	unix    bool // peers on a Unix socket are trusted proxies (netx.UnixPeers)
	only    field
	v4, v6  int
}

// field is the forwarding field a Resolver reads: any (the first present
// of the three), or only one.
type field uint8

const (
	anyField field = iota
	onlyForwarded
	onlyXForwardedFor
	onlyXRealIP
)

// fieldNames are the fields a Resolver can be told to read only, by
// their names in lower case.
var fieldNames = map[string]field{
	"forwarded":       onlyForwarded,
	"x-forwarded-for": onlyXForwardedFor,
	"x-real-ip":       onlyXRealIP,
}

// parseField reads the name of the field to read only ("" for any), in
// any case.
func parseField(name string) (field, error) {
	if name == "" {
		return anyField, nil
	}
	if f, ok := fieldNames[strings.ToLower(name)]; ok {
		return f, nil
	}
	return 0, fmt.Errorf("%w: Header must be Forwarded, X-Forwarded-For or X-Real-IP (in any case), or empty; got %q",
		ratelimit.ErrConfig, name)
}

// New validates its arguments: trusted proxies as CIDRs or addresses
// (and netx.UnixPeers for the peers on a Unix socket), the one forwarding
// field they set ("Forwarded", "X-Forwarded-For" or "X-Real-IP", in any
// case; "" to read the first present of the three), and the prefix
// lengths an identity keeps (0 for 32 and 64).
func New(trusted []string, header string, v4, v6 int) (*Resolver, error) {
	only, err := parseField(header)
	if err != nil {
		return nil, err
	}
	res := &Resolver{only: only, v4: v4, v6: v6}
	if res.v4 == 0 {
		res.v4 = 32
	}
	if res.v6 == 0 {
		res.v6 = 64
	}
	if res.v4 < 1 || res.v4 > 32 {
		return nil, fmt.Errorf("%w: IPv4PrefixLen must be 1 to 32, got %d", ratelimit.ErrConfig, v4)
	}
	if res.v6 < 1 || res.v6 > 128 {
		return nil, fmt.Errorf("%w: IPv6PrefixLen must be 1 to 128, got %d", ratelimit.ErrConfig, v6)
	}
	for _, s := range trusted {
		p, unix, err := netx.ParseProxy(s)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%w: TrustedProxies: %w", ratelimit.ErrConfig, err)
		case unix:
			res.unix = true
		default:
			res.trusted = append(res.trusted, p)
		}
	}
	return res, nil
}

// Source is where a request's client address is read: its TCP peer, and
// its forwarding fields (HTTP header fields, gRPC metadata).
type Source interface {
	// Peer is the TCP peer, "host:port" (http.Request.RemoteAddr's form).
	Peer() string
	// Forwarded are the values of the Forwarded (RFC 7239),
	// X-Forwarded-For and X-Real-IP fields.
	Forwarded() (forwarded, xForwardedFor, xRealIP []string)
}

// HTTP is an HTTP request as a Source: its RemoteAddr and header fields.
type HTTP http.Request

// Peer is the request's RemoteAddr.
func (r *HTTP) Peer() string { return r.RemoteAddr }

// Forwarded are the request's forwarding header fields.
func (r *HTTP) Forwarded() (forwarded, xForwardedFor, xRealIP []string) {
	return r.Header["Forwarded"], r.Header["X-Forwarded-For"], r.Header["X-Real-Ip"]
}

// Key returns the client address, masked to the configured prefix length:
// "192.0.2.7", or "2001:db8:1:2::/64".
func (res *Resolver) Key(src Source) (string, error) {
	peer := src.Peer()
	if host, a, ok := plainIPv4(peer); ok && res.v4 == 32 && !res.isTrusted(a) {
		return host, nil // what parsedKey returns for this peer, read without netip
	}
	return res.parsedKey(src, peer)
}

// parsedKey is Key for any peer: the address Addr finds, masked. peer is
// src's.
func (res *Resolver) parsedKey(src Source, peer string) (string, error) {
	a, err := res.Addr(src)
	if err != nil {
		return "", err
	}
	return res.mask(a, peer), nil
}

// plainIPv4 reads the commonest peer, an IPv4 address as a.String() writes
// it (four decimal fields, 0 to 255, without leading zeros), alone or with
// a port of 1 to 5 digits. It returns its host part and the address, or
// false for any other form, which parseHost reads.
func plainIPv4(peer string) (host string, a netip.Addr, ok bool) {
	var b [4]byte
	i := 0
	for f := range b {
		if f > 0 {
			if i == len(peer) || peer[i] != '.' {
				return "", a, false
			}
			i++
		}
		start, v := i, 0
		for ; i < len(peer) && i-start < 3 && '0' <= peer[i] && peer[i] <= '9'; i++ {
			v = v*10 + int(peer[i]-'0')
		}
		if i == start || v > 255 || (i-start > 1 && peer[start] == '0') {
			return "", a, false
		}
		b[f] = byte(v)
	}
	if i < len(peer) && !validPort(peer[i:]) {
		return "", a, false
	}
	return peer[:i], netip.AddrFrom4(b), true
}

// KeyOf is the key of a client at addr ("2001:db8::1", "192.0.2.7:1234"
// or "[2001:db8::1]:443"), as Key would return it for a request from
// there: what an operator who knows a client's address looks up.
func (res *Resolver) KeyOf(addr string) (string, error) {
	a, ok := parseHost(strings.TrimSpace(addr))
	if !ok {
		return "", fmt.Errorf("not an IP address: %q", addr)
	}
	return res.mask(a, ""), nil
}

// mask is a's key: a masked to the configured prefix length, written as
// peer's host part when that is how a itself is written.
func (res *Resolver) mask(a netip.Addr, peer string) string {
	bits := res.v6
	if a.Is4() {
		bits = res.v4
	}
	if bits == a.BitLen() {
		if host := hostText(peer, a); host != "" {
			return host
		}
		return a.String()
	}
	return netip.PrefixFrom(a, bits).Masked().String()
}

// hostText is the host part of remoteAddr ("192.0.2.7:1234") when it is
// IPv4 address a written as a.String() writes it: the key, without
// formatting it again; otherwise "" (IPv6, or a from a forwarding header).
func hostText(remoteAddr string, a netip.Addr) string {
	host, _, _ := strings.Cut(remoteAddr, ":")
	var buf [len("255.255.255.255")]byte
	if a.Is4() && string(a.AppendTo(buf[:0])) == host {
		return host
	}
	return ""
}

// Addr returns the client's full address. It fails only when the peer is
// not an IP address, unless it is a trusted proxy on a Unix socket, which
// fails only when its forwarding field gives no address.
func (res *Resolver) Addr(src Source) (netip.Addr, error) {
	text := src.Peer()
	peer, ok := parseHost(text)
	switch {
	case ok && !res.isTrusted(peer):
		return peer, nil
	case ok:
		return res.forwarded(src, peer), nil
	case !netx.IsUnixPeer(text):
		return netip.Addr{}, ErrNoAddr // never the peer's text: it may be an identity
	case !res.unix:
		return netip.Addr{}, errUnixPeer
	}
	if a := res.forwarded(src, netip.Addr{}); a.IsValid() {
		return a, nil
	}
	return netip.Addr{}, errUnixForwarded
}

// forwarded is the client's address that the forwarding fields of src, a
// request from a trusted proxy at peer, give: peer itself when they give
// none (an invalid address for a peer on a Unix socket).
func (res *Resolver) forwarded(src Source, peer netip.Addr) netip.Addr {
	fwd, xff, xrip := res.fields(src)
	if len(fwd) > 0 {
		return res.walk(fwd, forwardedFor, peer)
	}
	if len(xff) > 0 {
		return res.walk(xff, parseHost, peer)
	}
	if v := xrip; len(v) > 0 {
		return res.walk(v[len(v)-1:], parseHost, peer)
	}
	return peer
}

// fields are src's forwarding fields that res reads: the one it was told
// to read only, or all three.
func (res *Resolver) fields(src Source) (fwd, xff, xrip []string) {
	fwd, xff, xrip = src.Forwarded()
	switch res.only {
	case onlyForwarded:
		return fwd, nil, nil
	case onlyXForwardedFor:
		return nil, xff, nil
	case onlyXRealIP:
		return nil, nil, xrip
	}
	return fwd, xff, xrip
}

func (res *Resolver) isTrusted(a netip.Addr) bool {
	for _, p := range res.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// walk reads comma-separated hops from the right of the header values and
// returns the first untrusted one, or the last trusted one seen.
func (res *Resolver) walk(values []string, parse func(string) (netip.Addr, bool), last netip.Addr) netip.Addr {
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
		colon := strings.IndexByte(s, ':')
		if !validPort(s[colon:]) {
			return netip.Addr{}, false
		}
		s = s[:colon]
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
