package keyfunc_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// call is a request with metadata, as a gRPC call reads it: keys in lower
// case.
type call map[string][]string

func (c call) Metadata(key string) []string { return c[key] }

// MetadataOf reads a metadata key in any case and hashes its first value
// as Header hashes a header's: one API key, one identity on both doors. A
// call without it is told which key is missing, never a value; a key no
// call can carry is the server's misconfiguration.
func TestMetadataOf(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-API-Key", "k1")
	want, err := keyfunc.Header("X-API-Key")(r)
	if err != nil {
		t.Fatal(err)
	}
	key := keyfunc.MetadataOf[call]("X-API-Key")
	if got, err := key(call{"x-api-key": {"k1", "k2"}}); err != nil || got != want {
		t.Errorf("the key's first value: %q, %v; want %q, the header's identity", got, err, want)
	}
	for _, c := range []call{{}, {"x-api-key": {""}}, {"X-API-Key": {"k1"}}} {
		_, err := key(c)
		var m interface{ Missing() string }
		if !errors.Is(err, keyfunc.ErrNoKey) || !errors.As(err, &m) || m.Missing() != "metadata x-api-key" || strings.Contains(err.Error(), "k1") {
			t.Errorf("%v: %v; want ErrNoKey naming metadata x-api-key, without a value", c, err)
		}
	}
	if got, err := keyfunc.MetadataOf[call](":authority")(call{":authority": {"example.com"}}); err != nil || got == "" {
		t.Errorf(":authority: %q, %v", got, err)
	}
	for _, name := range []string{"", "x api key", "x-key:", "café"} {
		if _, err := keyfunc.MetadataOf[call](name)(call{}); !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("%q: %v; want ratelimit.ErrConfig", name, err)
		}
	}
}
