package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// An error that wraps another of this module's errors says "ratelimit:"
// once, and still is both: an invalid algorithm in a rule or a plan, and
// a decision skipped while Redis is marked down.
func TestErrorsSayThePrefixOnce(t *testing.T) {
	ctx := context.Background()
	valid := algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}
	invalid := algorithms.GCRA{Rate: 1, Period: time.Second}
	rules := []limiter.Rule{{Name: "per-ip", Algorithm: valid}}
	local, err := limiter.New(memstore.Must(), rules)
	if err != nil {
		t.Fatal(err)
	}
	srv, c := redistest.Mini(t)
	store, err := redisstore.New(c)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := limiter.New(store, rules)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	var down error
	for range 4 { // 3 refused connections mark Redis down; the 4th is skipped
		_, down = remote.Allow(ctx, "per-ip", "203.0.113.9")
	}

	_, badRule := middleware.New(c, []middleware.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: invalid}, Identity: keyfunc.IP()}})
	_, badPlan := local.Decide(ctx, limiter.Check{Rule: "per-ip", Identity: "203.0.113.9", Cost: 1, Plan: invalid})
	badReset := local.Reset(ctx, "per-ip", "203.0.113.9", invalid)
	for _, tc := range []struct {
		name string
		err  error
		is   []error
	}{
		{"invalid rule", badRule, []error{ratelimit.ErrConfig, algorithms.ErrInvalid}},
		{"invalid plan", badPlan, []error{limiter.ErrCheck, algorithms.ErrInvalid}},
		{"invalid plan to reset", badReset, []error{limiter.ErrCheck, algorithms.ErrInvalid}},
		{"backend marked down", down, []error{limiter.ErrBackend, limiter.ErrUnavailable}},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if got := strings.Count(tc.err.Error(), "ratelimit:"); got != 1 || !strings.HasPrefix(tc.err.Error(), "ratelimit: ") {
			t.Errorf("%s: %q says ratelimit: %d times, want once, first", tc.name, tc.err, got)
		}
		for _, target := range tc.is {
			if !errors.Is(tc.err, target) {
				t.Errorf("%s: %v is not %v", tc.name, tc.err, target)
			}
		}
	}
}
