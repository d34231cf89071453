package grpclimit

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// A KeyFunc returns the identity of a call, for Rule.Identity and Rule.AltIdentity.
// An empty identity, or an error wrapping keyfunc.ErrNoKey, is none.
type KeyFunc = func(*Call) (string, error)

// peerKey is Peer's: no proxy is trusted, a valid configuration.
var peerKey, _ = keyfunc.ClientIPOf[*Call](keyfunc.IPConfig{})

// Peer keys calls by their TCP peer's address, IPv6 grouped by /64, as
// keyfunc.IP keys HTTP requests: the same identity for the same client on
// both doors. Behind a gateway, use ClientIP.
func Peer() KeyFunc { return peerKey }

// ClientIP keys calls by the client address cfg resolves, as
// keyfunc.ClientIP does for HTTP: the forwarded, x-forwarded-for and
// x-real-ip metadata a gateway sets (grpc-gateway, Envoy) are read only
// when the peer is one of cfg.TrustedProxies. Invalid configuration is an
// error wrapping ratelimit.ErrConfig.
//
// Trust model: name in cfg.Header the one field the gateway sets (say
// "X-Forwarded-For"), and only that metadata is read. With cfg.Header
// empty, the first present of forwarded, x-forwarded-for and x-real-ip
// wins, so a client can choose its identity with a field the gateway
// passes through unchanged, unless the gateway strips it.
func ClientIP(cfg keyfunc.IPConfig) (KeyFunc, error) { return keyfunc.ClientIPOf[*Call](cfg) }

// Metadata keys calls by the first value of a metadata key, hashed as
// keyfunc.Header hashes a header's (keyfunc.Hash), so that an API key
// sent as an HTTP header and as gRPC metadata is one identity. A binary
// key ("x-token-bin") is hashed from its bytes. A call without the key
// has no identity, and is told which key is missing. A key no call can
// carry (empty, or with a character other than the letters, digits and
// "-", "_" and ".", which gRPC allows in keys; ":authority" is read too)
// is the server's
// misconfiguration: every call fails with an error wrapping
// ratelimit.ErrConfig (codes.Internal), as with an empty Constant.
func Metadata(key string) KeyFunc {
	key = strings.ToLower(key)
	if !metadataKey(key) {
		err := fmt.Errorf("%w: grpclimit.Metadata: %q is not a metadata key", ratelimit.ErrConfig, key)
		return func(*Call) (string, error) { return "", err }
	}
	return func(c *Call) (string, error) {
		v := c.Metadata(key)
		if len(v) == 0 || v[0] == "" {
			return "", &missing{"metadata " + key}
		}
		return keyfunc.Hash(v[0]), nil
	}
}

// metadataKey reports whether key, in lower case, is a key gRPC lets a
// call carry: one or more of a-z, 0-9, "-", "_" and ".", after a ":" for
// a pseudo-header a server reads as metadata (":authority").
func metadataKey(key string) bool {
	key = strings.TrimPrefix(key, ":")
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return key != ""
}

// Method keys calls by their full method: a limit per method.
func Method() KeyFunc {
	return func(c *Call) (string, error) { return c.method, nil }
}

// Constant is the same identity for every call: one shared limit.
func Constant(id string) KeyFunc {
	return func(*Call) (string, error) {
		if id == "" {
			return "", fmt.Errorf("%w: empty constant", ratelimit.ErrConfig)
		}
		return id, nil
	}
}

// Key adapts a function of a call's context and full method, for
// Rule.Identity: metadata.FromIncomingContext(ctx) has the call's metadata and
// peer.FromContext(ctx) its peer.
func Key(fn func(ctx context.Context, method string) (string, error)) KeyFunc {
	return func(c *Call) (string, error) { return fn(c.ctx, c.method) }
}

// missing is the error of a call without the metadata a rule reads: it
// wraps keyfunc.ErrNoKey and names the key, never a value.
type missing struct{ what string }

func (e *missing) Error() string   { return keyfunc.ErrNoKey.Error() + ": " + e.what }
func (e *missing) Unwrap() error   { return keyfunc.ErrNoKey }
func (e *missing) Missing() string { return e.what }
