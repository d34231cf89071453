package grpclimit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// A refusal the deny cache repeats carries the ratelimit metadata of every
// rule of the stack, as a fresh refusal does: the rule that refused, and
// what the first refusal found of the others.
func TestCachedRefusalReportsEveryRule(t *testing.T) {
	m := miniredis.RunT(t)
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}, Identity: grpclimit.Metadata("x-api-key")},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}, Identity: grpclimit.Constant("all")},
	}
	cc, _ := serve(t, newServer(t, onRedis(t, m.Addr()), rules), pipe)
	if _, err := call(cc, "k"); err != nil {
		t.Fatal(err)
	}
	var fresh, cached string
	for i, got := range []*string{&fresh, &cached} {
		md, err := call(cc, "k")
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("call %d: %v, want ResourceExhausted", i+2, err)
		}
		*got = strings.Join(md.Get("ratelimit"), ", ")
	}
	for name, v := range map[string]string{"fresh": fresh, "cached": cached} {
		if !strings.Contains(v, `"per-key";r=0`) || !strings.Contains(v, `"global";r=99`) {
			t.Errorf("%s refusal's ratelimit metadata %q, want both rules", name, v)
		}
	}
}
