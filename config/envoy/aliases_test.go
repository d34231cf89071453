package envoy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// TestAliasesAreBounded: descriptors whose aliases stand for a list that
// contains them, or for more nodes than a file could mean, are a problem
// at the alias, found at once, rather than a walk that never ends or
// fills the memory.
func TestAliasesAreBounded(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("domain: d\nx0: &d0 [{key: a, rate_limit: {unit: second, requests_per_unit: 1}}]\n")
	for i := 1; i < 7; i++ {
		fmt.Fprintf(&bomb, "x%d: &d%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("{key: k, descriptors: *d%d}, ", i-1), 10), ", "))
	}
	bomb.WriteString("descriptors: *d6\n")
	for _, tc := range []struct{ name, file, want string }{
		{"bomb", bomb.String(), "f.yaml:6:172: (file): found aliases that stand for more than 100000 nodes"},
		{"cycle", "domain: d\ndescriptors: &d\n  - key: a\n    descriptors: *d\n", "f.yaml:4:18: (file): found the alias *d inside the node it stands for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := envoy.Parse("f.yaml", []byte(tc.file))
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ratelimit.ErrConfig) || !strings.HasPrefix(fmt.Sprint(err), tc.want) {
					t.Errorf("Parse: %v, want a problem beginning %q", err, tc.want)
				}
			case <-time.After(time.Minute): // a bomb read whole would not return at all
				t.Fatal("Parse did not return within a minute")
			}
		})
	}
}
