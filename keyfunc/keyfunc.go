// Package keyfunc extracts the identity a rate limit applies to from an HTTP
// request: the client IP, an API key, a user ID, the route, or a combination.
//
// A KeyFunc has the same shape as go-chi/httprate's key functions, so
// httprate.KeyByEndpoint and others plug in unchanged (for client IPs,
// prefer ClientIP, which reads forwarding headers only from trusted
// proxies).
//
// Trust model: everything in a request is chosen by the client except the
// TCP peer address (RemoteAddr). Forwarding headers are believed only from
// proxies you list, and only the one field they set when you name it in
// IPConfig.Header (see IPConfig: left unnamed, the proxies must strip the
// fields they do not set); API keys are hashed before they leave the
// process; a key function that finds nothing returns ErrNoKey rather than an
// empty identity, so a missing header never becomes one shared bucket.
package keyfunc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/token"
)

// KeyFunc returns the identity of a request.
type KeyFunc func(r *http.Request) (string, error)

// ErrNoKey is returned (wrapped) when a request carries no identity for a
// key function: a missing header, no user in the context. (A request
// without a route pattern is not one: Route reports the server's
// misconfiguration, ratelimit.ErrConfig.)
var ErrNoKey = ratelimit.ErrNoKey

// missing is the error of a key function that found no identity: it
// wraps ErrNoKey and says what is missing (a header's name, a form
// field's), never a value. Doors tell the client so.
type missing struct{ what string }

func (e *missing) Error() string   { return ErrNoKey.Error() + ": " + e.what }
func (e *missing) Unwrap() error   { return ErrNoKey }
func (e *missing) Missing() string { return e.what }

// Header returns the value of the named header, hashed (SHA-256, first 16
// bytes in hex) so API keys and tokens never reach Redis in the clear.
// A name that no request can carry (empty, or not a header field name) is
// the server's misconfiguration: every request gets an error wrapping
// ratelimit.ErrConfig, as from an empty Constant.
func Header(name string) KeyFunc {
	if !token.Valid(name) {
		return misconfigured(fmt.Errorf("%w: keyfunc.Header: %q is not a header field name", ratelimit.ErrConfig, name))
	}
	canonical := http.CanonicalHeaderKey(name)
	return func(r *http.Request) (string, error) {
		v := r.Header.Get(canonical)
		if v == "" {
			return "", &missing{"header " + canonical}
		}
		return Hash(v), nil
	}
}

// Hash is the digest Header applies to a value: the hex of the first 16
// bytes of its SHA-256. Other doors' key functions (grpclimit's metadata
// keys) apply it too, so that one API key is one identity on every door;
// an operator finds a client by the hash of its raw key.
func Hash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:16])
}

// Context returns the request context's value for key, which must be a
// non-empty string or a fmt.Stringer (a user ID set by an authentication
// middleware, say). When it is not, the error names the key's type and
// what was found instead (no value, an empty string, a nil pointer, a
// value of another type), never the value. A nil pointer (an anonymous
// user, say) is no identity: its String method is not called. A nil key,
// under which context.WithValue stores nothing, is the server's
// misconfiguration: an error wrapping ratelimit.ErrConfig.
func Context(key any) KeyFunc {
	if key == nil {
		return misconfigured(fmt.Errorf("%w: keyfunc.Context: nil key", ratelimit.ErrConfig))
	}
	return func(r *http.Request) (string, error) {
		v := r.Context().Value(key)
		switch v := v.(type) {
		case string:
			if v != "" {
				return v, nil
			}
		case fmt.Stringer:
			if nilPointer(v) {
				break
			}
			if s := v.String(); s != "" {
				return s, nil
			}
		}
		return "", fmt.Errorf("%w: context key %T: %s", ErrNoKey, key, unusable(v))
	}
}

// nilPointer reports whether v is a nil pointer.
func nilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// unusable describes a context value Context cannot use by its type, never
// its value.
func unusable(v any) string {
	switch v.(type) {
	case nil:
		return "no value"
	case string:
		return "an empty string"
	case fmt.Stringer:
		if nilPointer(v) {
			return fmt.Sprintf("a nil %T", v)
		}
		return fmt.Sprintf("a value of type %T whose String() is empty", v)
	}
	return fmt.Sprintf("a value of type %T, not a string or fmt.Stringer", v)
}

// Constant returns the same identity for every request: a global limit.
// An empty id is the server's misconfiguration, not a client's missing
// identity: an error wrapping ratelimit.ErrConfig (500), as grpclimit's
// Constant answers Internal.
func Constant(id string) KeyFunc {
	return func(*http.Request) (string, error) {
		if id == "" {
			return "", fmt.Errorf("%w: empty constant identity", ratelimit.ErrConfig)
		}
		return id, nil
	}
}

// misconfigured is a KeyFunc that fails every request with err, a
// misconfiguration found when the key function was built.
func misconfigured(err error) KeyFunc {
	return func(*http.Request) (string, error) { return "", err }
}

// Join combines key functions: the identity is their results joined by "|",
// with "\" and "|" escaped inside each part so no two different combinations
// give the same identity. It fails when any part fails.
func Join(fns ...KeyFunc) KeyFunc {
	parts := make([]func(*http.Request) (string, error), len(fns))
	for i, fn := range fns {
		parts[i] = fn
	}
	return JoinOf(parts...)
}

// JoinOf is Join for the key functions of any door's requests (grpclimit's
// calls): the same identity from the same parts.
func JoinOf[R any](fns ...func(R) (string, error)) func(R) (string, error) {
	return func(r R) (string, error) {
		var b strings.Builder
		for i, fn := range fns {
			part, err := fn(r)
			if err != nil {
				return "", err
			}
			if part == "" {
				return "", fmt.Errorf("%w: part %d of a join is empty", ErrNoKey, i)
			}
			if i > 0 {
				b.WriteByte('|')
			}
			joinEscaper.WriteString(&b, part)
		}
		return b.String(), nil
	}
}

var joinEscaper = strings.NewReplacer(`\`, `\\`, `|`, `\|`)
