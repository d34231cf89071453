package keyfunc

import (
	"fmt"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/token"
)

// MetadataOf keys the requests of a door with metadata (grpclimit's calls)
// by the first value of a metadata key, hashed as Header hashes a
// header's, so that an API key sent as an HTTP header and as metadata is
// one identity. The key is read in lower case, as gRPC's keys are; a
// binary key's value ("x-token-bin") is hashed from its bytes, as the
// request gives them. A request without the key has no identity: an error
// wrapping ErrNoKey that names the key, never a value. A key no call can
// carry (empty, or with a character other than the letters, digits and
// "-", "_" and ".", after a ":" for a pseudo-header such as ":authority")
// is the server's misconfiguration: every request fails with an error
// wrapping ratelimit.ErrConfig.
func MetadataOf[R interface{ Metadata(key string) []string }](key string) func(R) (string, error) {
	key = strings.ToLower(key)
	if !token.MetadataKey(strings.TrimPrefix(key, ":")) {
		err := fmt.Errorf("%w: keyfunc.MetadataOf: %q is not a metadata key", ratelimit.ErrConfig, key)
		return func(R) (string, error) { return "", err }
	}
	return func(r R) (string, error) {
		if v := r.Metadata(key); len(v) > 0 && v[0] != "" {
			return Hash(v[0]), nil
		}
		return "", &missing{"metadata " + key}
	}
}
