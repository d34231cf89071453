package guard

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// A door of more rules than one decision takes (256: see limiter.Decide)
// fails at construction, naming the first rule past the bound, where each
// of its requests would have been refused as misconfigured; 256 rules
// build.
func TestNewBoundsTheRules(t *testing.T) {
	rules := func(n int) []Rule[string] {
		out := make([]Rule[string], n)
		for i := range out {
			out[i] = Rule[string]{Rule: limiter.Rule{Name: "r" + strconv.Itoa(i), Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}},
				Identity: func(s string) (string, error) { return s, nil }}
		}
		return out
	}
	for _, tc := range []struct {
		n    int
		want string // "" for none
	}{{256, ""}, {257, `rule "r256": 257 rules`}} {
		lim, err := limiter.New(memstore.Must(), Limits(rules(tc.n)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(lim, rules(tc.n), Config[string]{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d rules: %v", tc.n, err)
		case tc.want != "" && (!errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%d rules: %v, want ErrConfig mentioning %q", tc.n, err, tc.want)
		}
		lim.Close()
	}
}
