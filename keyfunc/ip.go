package keyfunc

import (
	"fmt"
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit/internal/clientip"
)

// IPConfig configures how the client address is found and grouped.
//
// Trust model: forwarding headers are believed only from TrustedProxies,
// and then only as far as those proxies control them. A proxy usually sets
// one forwarding field (nginx's X-Real-IP, an append to X-Forwarded-For,
// a Forwarded element) and passes the others through as the client sent
// them. Name that field in Header: only it is read. With Header empty,
// the first field present wins (Forwarded, then X-Forwarded-For, then
// X-Real-IP), so the proxies must overwrite or strip every forwarding
// field they do not set themselves; otherwise a client chooses its own
// identity (and escapes per-IP limits, or matches middleware.ExemptIPs)
// by sending one that comes earlier in that order.
type IPConfig struct {
	// TrustedProxies lists the peers whose forwarding headers are believed,
	// as CIDRs ("10.0.0.0/8") or addresses ("127.0.0.1"), and "unix" (in
	// any case) for every peer on a Unix domain socket: a proxy on the
	// same host, which has no IP address. With none, all forwarding
	// headers are ignored and the TCP peer is the client; a request over a
	// Unix socket then has no identity.
	TrustedProxies []string
	// Header names the one forwarding field the trusted proxies set:
	// "Forwarded" (RFC 7239, its for= parameters), "X-Forwarded-For" or
	// "X-Real-IP", in any case; any other name is an error wrapping
	// ratelimit.ErrConfig. Named, it is the only field read from a trusted
	// peer, and the others are ignored whatever they say. Empty (the
	// default, kept for compatibility) reads the first of the three
	// present, which is safe only when the proxies overwrite or strip the
	// fields they do not set: name the field to be safe.
	Header string
	// IPv4PrefixLen is how many leading bits of an IPv4 address form the
	// identity: 1 to 32, 0 for 32 (the whole address).
	IPv4PrefixLen int
	// IPv6PrefixLen is the same for IPv6: 1 to 128, 0 for 64 (one host
	// usually owns a whole /64 and could otherwise rotate addresses for
	// free).
	IPv6PrefixLen int
}

// peer resolves the TCP peer only: no proxy is trusted (a valid
// configuration, so New cannot fail).
var peer = func() KeyFunc {
	res, _ := clientip.New(nil, "", 0, 0)
	return ipKey(res)
}()

// IP keys requests by the TCP peer address, IPv6 grouped by /64, ignoring
// every forwarding header. Behind a proxy, use ClientIP with the proxy listed.
func IP() KeyFunc { return peer }

// ClientIP keys requests by the client address that cfg resolves, masked
// to the configured prefix lengths: "192.0.2.7", or "2001:db8:1:2::/64".
// Invalid configuration is an error wrapping ratelimit.ErrConfig.
//
// Which address: the TCP peer (RemoteAddr) is the client unless it lies in
// cfg.TrustedProxies. Only then are forwarding headers read: cfg.Header
// alone when it names one, else the first present of Forwarded (RFC 7239,
// its for= parameters), X-Forwarded-For and X-Real-IP (its last line).
// The field is walked from the right, skipping hops that are themselves
// trusted proxies; the first untrusted address is the client. A malformed
// or "unknown" hop ends the walk at the last trusted address seen; a chain
// of only trusted proxies yields its left-most hop.
//
// Trust model: headers sent by an untrusted peer are never read. From a
// trusted peer, what a client could have written is read too: entries it
// adds to the field its proxy appends to sit left of the address the
// proxy appends and are never reached, but a field the proxy does not set
// reaches the resolver as the client sent it. With cfg.Header naming the
// field the proxies set, a client cannot choose its own identity. With
// cfg.Header empty, it cannot only if the proxies overwrite or strip the
// forwarding fields they do not set: behind nginx setting only X-Real-IP,
// a client-sent X-Forwarded-For wins, and behind a proxy appending only
// to X-Forwarded-For, a client-sent Forwarded wins.
func ClientIP(cfg IPConfig) (KeyFunc, error) {
	res, err := resolver(cfg)
	if err != nil {
		return nil, err
	}
	return ipKey(res), nil
}

// resolver is the resolver cfg configures; invalid configuration is an
// error wrapping ratelimit.ErrConfig.
func resolver(cfg IPConfig) (*clientip.Resolver, error) {
	return clientip.New(cfg.TrustedProxies, cfg.Header, cfg.IPv4PrefixLen, cfg.IPv6PrefixLen)
}

// ipKey is a KeyFunc on res whose failures wrap ErrNoKey.
func ipKey(res *clientip.Resolver) KeyFunc {
	return func(r *http.Request) (string, error) {
		return sourceKey(res, (*clientip.HTTP)(r))
	}
}

// Source is a request of any door as ClientIPOf reads it: its TCP peer and
// its forwarding fields. grpclimit's calls are Sources.
type Source interface {
	// Peer is the TCP peer, "host:port".
	Peer() string
	// Forwarded are the values of the Forwarded (RFC 7239),
	// X-Forwarded-For and X-Real-IP fields (gRPC: their metadata); only
	// IPConfig.Header's is read when it names one.
	Forwarded() (forwarded, xForwardedFor, xRealIP []string)
}

// ClientIPOf is ClientIP for requests of any door that are Sources: the
// same address, read the same way, so that doors on one rule share its
// counts.
func ClientIPOf[R Source](cfg IPConfig) (func(R) (string, error), error) {
	res, err := resolver(cfg)
	if err != nil {
		return nil, err
	}
	return func(r R) (string, error) { return sourceKey(res, r) }, nil
}

// sourceKey is src's key by res; its failures wrap ErrNoKey.
func sourceKey(res *clientip.Resolver, src clientip.Source) (string, error) {
	key, err := res.Key(src)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoKey, err)
	}
	return key, nil
}
