package keyfunc

import (
	"fmt"
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit/internal/clientip"
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
	// usually owns a whole /64 and could otherwise rotate addresses for
	// free).
	IPv6PrefixLen int
}

// peer resolves the TCP peer only: no proxy is trusted (a valid
// configuration, so New cannot fail).
var peer = func() KeyFunc {
	res, _ := clientip.New(nil, 0, 0)
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
// cfg.TrustedProxies. Only then are forwarding headers read, in this
// order, the first present winning: Forwarded (RFC 7239, its for=
// parameters), else X-Forwarded-For, else X-Real-IP (its last value). The
// chain is walked from the right, skipping hops that are themselves
// trusted proxies; the first untrusted address is the client. Headers sent
// by an untrusted peer are never read, so a client cannot choose its own
// identity: spoofed entries it adds sit left of the address its first
// proxy appends and are never reached. A malformed or "unknown" hop ends
// the walk at the last trusted address seen; a chain of only trusted
// proxies yields its left-most hop.
func ClientIP(cfg IPConfig) (KeyFunc, error) {
	res, err := clientip.New(cfg.TrustedProxies, cfg.IPv4PrefixLen, cfg.IPv6PrefixLen)
	if err != nil {
		return nil, err
	}
	return ipKey(res), nil
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
	// X-Forwarded-For and X-Real-IP fields (gRPC: their metadata).
	Forwarded() (forwarded, xForwardedFor, xRealIP []string)
}

// ClientIPOf is ClientIP for requests of any door that are Sources: the
// same address, read the same way, so that doors on one rule share its
// counts.
func ClientIPOf[R Source](cfg IPConfig) (func(R) (string, error), error) {
	res, err := clientip.New(cfg.TrustedProxies, cfg.IPv4PrefixLen, cfg.IPv6PrefixLen)
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
