package keyfunc_test

import (
	"errors"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// A key function that no request can ever satisfy (a header without a
// name, or with a name no request can carry; a form field without a name;
// a nil context key, which context.WithValue refuses) is the server's
// misconfiguration, as an empty Constant is: an error wrapping
// ratelimit.ErrConfig (500), not ErrNoKey, which would blame every client
// with a 401.
func TestUnsatisfiableKeysAreConfigErrors(t *testing.T) {
	r := request("203.0.113.9:1", "X-API-Key", "k")
	for name, fn := range map[string]keyfunc.KeyFunc{
		"empty header name":        keyfunc.Header(""),
		"header name with a space": keyfunc.Header("X API Key"),
		"header name with a colon": keyfunc.Header("X-API-Key:"),
		"empty form field name":    keyfunc.FormValue(""),
		"nil context key":          keyfunc.Context(nil),
		"join of an empty header":  keyfunc.Join(keyfunc.IP(), keyfunc.Header("")),
	} {
		if got, err := fn(r); !errors.Is(err, ratelimit.ErrConfig) || errors.Is(err, keyfunc.ErrNoKey) || got != "" {
			t.Errorf("%s: got %q, %v, want ErrConfig and no ErrNoKey", name, got, err)
		}
	}
}
