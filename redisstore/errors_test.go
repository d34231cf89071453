package redisstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// Errors name their cause and never carry an identity: Redis quotes a
// refused command's arguments (the keys), which the store cuts off.
func TestErrorsNameTheCauseWithoutIdentities(t *testing.T) {
	const identity = "203.0.113.77"
	rules := []limiter.Rule{{Name: "per-ip", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 5}}}
	noFunctions := []string{"--rename-command", "FCALL", "fcall-off", "--rename-command", "FUNCTION", "function-off"}
	noScripts := []string{"--rename-command", "EVALSHA", "evalsha-off", "--rename-command", "EVAL", "eval-off"}
	for _, tc := range []struct {
		name  string
		args  []string
		opts  []any
		cause string
	}{
		{"scripting disabled", append(noFunctions, noScripts...), nil, "unknown command 'evalsha'"},
		{"functions disabled, and required", noFunctions, []any{redisstore.WithFunctions(true)}, "unknown command 'fcall'"},
		{"TIME disabled", []string{"--rename-command", "TIME", "time-off"}, nil, "TIME failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redistest.Start(t, tc.args...)
			lim, err := ruletest.Build(s.Client, rules, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = lim.Allow(ctx, "per-ip", identity)
			if !errors.Is(err, limiter.ErrBackend) || !strings.Contains(err.Error(), tc.cause) || strings.Contains(err.Error(), identity) {
				t.Errorf("got %v, want ErrBackend naming %q without the identity", err, tc.cause)
			}
		})
	}
}
