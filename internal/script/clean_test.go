package script

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Clean cuts what a reply quotes of the call, which carries identities:
// the arguments of an unknown command, and the key an ACL refused (Redis
// 7.2 names it; 7.0, which the tests run, does not, so the replies are
// built here).
func TestCleanCutsQuotedKeys(t *testing.T) {
	const identity = "203.0.113.77"
	key := "rl:{per-ip:" + identity + "}:gcra"
	for _, tc := range []struct{ reply, want string }{
		{"ERR unknown command 'evalsha', with args beginning with: 'abc' '1' '" + key + "' ", "ERR unknown command 'evalsha'"},
		{"NOPERM User app has no permissions to access the '" + key + "' key", "NOPERM User app has no permissions to access a key"},
		{"NOPERM User default has no permissions to access the '" + key + "' key", "NOPERM User default has no permissions to access a key"},
		{"NOPERM User app has no permissions to run the 'fcall' command", "NOPERM User app has no permissions to run the 'fcall' command"},
		{"NOPERM this user has no permissions to access one of the keys used as arguments", "NOPERM this user has no permissions to access one of the keys used as arguments"},
	} {
		err := Clean(proto(tc.reply))
		if got := err.Error(); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.reply, got, tc.want)
		}
		if strings.Contains(err.Error(), identity) {
			t.Errorf("Clean(%q) keeps the identity: %q", tc.reply, err)
		}
		if _, ok := err.(redis.Error); !ok {
			t.Errorf("Clean(%q) is %T, not a Redis reply", tc.reply, err)
		}
	}
}
