package rls_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// limited is d with a limit override of n per mult units u (mult 0: no
// multiplier).
func limited(d *ratelimitv3.RateLimitDescriptor, n uint32, u typev3.RateLimitUnit, mult uint32) *ratelimitv3.RateLimitDescriptor {
	d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: n, Unit: u}
	if mult != 0 {
		d.Limit.UnitMultiplier = wrapperspb.UInt32(mult)
	}
	return d
}

// wantLimit checks a status's current_limit.
func wantLimit(t *testing.T, what string, st *rlsv3.RateLimitResponse_DescriptorStatus, name string, n uint32, u rlsv3.RateLimitResponse_RateLimit_Unit, mult uint32) {
	t.Helper()
	l := st.GetCurrentLimit()
	if l.GetName() != name || l.GetRequestsPerUnit() != n || l.GetUnit() != u || l.GetUnitMultiplier().GetValue() != mult {
		t.Errorf("%s: current_limit %v, want %q, %d per %d %v", what, l, name, n, mult, u)
	}
}

func TestLimitOverride(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		// The configured limit is 3 a day: the override of 5 a day counts
		// in the same state.
		res := ask(t, c, limited(desc("remote_address", "x"), 5, typev3.RateLimitUnit_DAY, 0))
		same(t, "override", summary(res), []any{ok, ok, uint32(4)})
		wantLimit(t, "override", res.Statuses[0], "per-ip", 5, rlsv3.RateLimitResponse_RateLimit_DAY, 0)
		res = ask(t, c, hits(desc("remote_address", "x"), 0))
		same(t, "the configured limit, same state", summary(res), []any{ok, ok, uint32(2)})
		wantLimit(t, "configured", res.Statuses[0], "per-ip", 3, rlsv3.RateLimitResponse_RateLimit_DAY, 0)
		same(t, "override's last", summary(ask(t, c, hits(limited(desc("remote_address", "x"), 5, typev3.RateLimitUnit_DAY, 0), 4))), []any{ok, ok, uint32(0)})
		same(t, "override refuses", summary(ask(t, c, limited(desc("remote_address", "x"), 5, typev3.RateLimitUnit_DAY, 0))), []any{over, over, uint32(0)})

		// An override that is the configured limit is that limit: one
		// check with the descriptor that has none.
		res = ask(t, c, desc("remote_address", "w"), limited(desc("remote_address", "w"), 3, typev3.RateLimitUnit_DAY, 0))
		same(t, "the configured limit as an override", summary(res), []any{ok, ok, uint32(1), ok, uint32(1)})

		// Another window: its own state, its own reset.
		res = ask(t, c, limited(desc("remote_address", "x"), 2, typev3.RateLimitUnit_MINUTE, 0))
		same(t, "per minute", summary(res), []any{ok, ok, uint32(1)})
		wantLimit(t, "per minute", res.Statuses[0], "per-ip", 2, rlsv3.RateLimitResponse_RateLimit_MINUTE, 0)
		res = ask(t, c, limited(desc("remote_address", "y"), 10, typev3.RateLimitUnit_SECOND, 30))
		same(t, "per 30 s", summary(res), []any{ok, ok, uint32(9)})
		wantLimit(t, "per 30 s", res.Statuses[0], "per-ip", 10, rlsv3.RateLimitResponse_RateLimit_SECOND, 30)
		reset := res.Statuses[0].DurationUntilReset.AsDuration()
		if b.mini != nil && reset != 30*time.Second || reset <= 0 || reset > 30*time.Second {
			t.Errorf("per 30 s: duration_until_reset %v, want 30s on miniredis (at hh:mm:30), within 30s elsewhere", reset)
		}

		z := func() *ratelimitv3.RateLimitDescriptor { return desc("remote_address", "z") }
		for _, tc := range []struct {
			name, why string
			ds        []*ratelimitv3.RateLimitDescriptor
		}{
			{"unknown unit", "unit UNKNOWN", ds(limited(z(), 1, typev3.RateLimitUnit_UNKNOWN, 0))},
			{"no such unit", "unit 99", ds(limited(z(), 1, typev3.RateLimitUnit(99), 0))},
			{"multiplier overflows", "unit_multiplier 4294967295", ds(limited(z(), 1, typev3.RateLimitUnit_YEAR, 1<<32-1))},
			{"window too long", "Window must be at most", ds(limited(z(), 1<<32-1, typev3.RateLimitUnit_YEAR, 100))},
			{"one identity under two limits", "descriptor 1: the same limit and values as descriptor 0", ds(z(), limited(z(), 9, typev3.RateLimitUnit_DAY, 0))},
		} {
			_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: tc.ds})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("%s: %v, want InvalidArgument saying %q", tc.name, err, tc.why)
			}
		}
	})
}

// TestLimitOverrideUnmatched: as the reference, a descriptor that
// matches no limit, or an unlimited one, is limited by its override
// under its own keys and values; overrides of one unit share its count;
// each counts toward the cap.
func TestLimitOverrideUnmatched(t *testing.T) {
	b := miniBackend(t)
	c := serve(t, b, serverConfig, rls.Options{MaxOverrides: 2})
	perMinute := func(d *ratelimitv3.RateLimitDescriptor, n uint32) *ratelimitv3.RateLimitDescriptor {
		return limited(d, n, typev3.RateLimitUnit_MINUTE, 0)
	}
	res := ask(t, c, perMinute(desc("unknown", "x"), 2))
	same(t, "unmatched", summary(res), []any{ok, ok, uint32(1)})
	wantLimit(t, "unmatched", res.Statuses[0], "", 2, rlsv3.RateLimitResponse_RateLimit_MINUTE, 0)
	if d := res.Statuses[0].DurationUntilReset.AsDuration(); d != 30*time.Second {
		t.Errorf("duration_until_reset %v, want 30s (at hh:mm:30)", d)
	}
	same(t, "unmatched, last", summary(ask(t, c, perMinute(desc("unknown", "x"), 2))), []any{ok, ok, uint32(0)})
	same(t, "unmatched, over", summary(ask(t, c, perMinute(desc("unknown", "x"), 2), desc("remote_address", "r"))), []any{over, over, uint32(0), ok, uint32(3)})
	same(t, "another value", summary(ask(t, c, perMinute(desc("unknown", "y"), 2))), []any{ok, ok, uint32(1)})
	same(t, "another key, the same value", summary(ask(t, c, perMinute(desc("other", "x"), 2))), []any{ok, ok, uint32(1)})
	same(t, "another override of the unit, the same count", summary(ask(t, c, perMinute(desc("unknown", "x"), 5))), []any{ok, ok, uint32(2)})
	res = ask(t, c, perMinute(desc("tenant", "t1", "path", "/health"), 2))
	same(t, "unlimited", summary(res), []any{ok, ok, uint32(1)})
	wantLimit(t, "unlimited", res.Statuses[0], "", 2, rlsv3.RateLimitResponse_RateLimit_MINUTE, 0)
	same(t, "without the override, no limit", summary(ask(t, c, desc("unknown", "x"))), []any{ok, ok, uint32(0)})
	_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: ds(perMinute(desc("unknown", "x"), 6))})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "2 distinct overrides") {
		t.Errorf("a third distinct override: %v, want InvalidArgument, the cap of 2", err)
	}
	res, err = c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "elsewhere", Descriptors: ds(perMinute(desc("unknown", "x"), 2))})
	if err != nil || res.Statuses[0].CurrentLimit != nil {
		t.Errorf("a domain not configured: %v, %v, want OK with no limit", res, err)
	}
}

func TestLimitOverrideCap(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{MaxOverrides: 3})
		tryIn := func(n uint32, u typev3.RateLimitUnit) error {
			_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge",
				Descriptors: []*ratelimitv3.RateLimitDescriptor{limited(desc("remote_address", "h"), n, u, 0)}})
			return err
		}
		try := func(n uint32) error { return tryIn(n, typev3.RateLimitUnit_HOUR) }
		// Invalid overrides take no place.
		if err := tryIn(1, typev3.RateLimitUnit_UNKNOWN); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("1 an UNKNOWN: %v, want InvalidArgument", err)
		}
		// A client sending endless distinct overrides gets the first three.
		var accepted []uint32
		for n := uint32(1); n <= 50; n++ {
			switch err := try(n); status.Code(err) {
			case codes.OK:
				accepted = append(accepted, n)
			case codes.InvalidArgument:
				if n == 4 && !strings.Contains(err.Error(), "3 distinct overrides") {
					t.Errorf("beyond the cap: %v, want it to say why", err)
				}
			default:
				t.Fatalf("%d an hour: %v", n, err)
			}
		}
		if !slices.Equal(accepted, []uint32{1, 2, 3}) {
			t.Fatalf("accepted %v, want [1 2 3]", accepted)
		}
		// Many clients at once: still three.
		c = serve(t, b, serverConfig, rls.Options{MaxOverrides: 3})
		var mu sync.Mutex
		var wg sync.WaitGroup
		accepted = nil
		for n := uint32(1); n <= 40; n++ {
			wg.Go(func() {
				if err := try(n); err == nil {
					mu.Lock()
					accepted = append(accepted, n)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(accepted) != 3 {
			t.Fatalf("at once: accepted %v, want three", accepted)
		}
		// The accepted ones stay accepted.
		for _, n := range accepted {
			if err := try(n); err != nil {
				t.Errorf("%d an hour again: %v", n, err)
			}
		}
	})
}

func ds(d ...*ratelimitv3.RateLimitDescriptor) []*ratelimitv3.RateLimitDescriptor { return d }

// TestOverrideOfNeverRefusingLimit: as the reference, an override is
// enforced on a descriptor whose limit never refuses (shadow_mode,
// quota_mode), and it counts each value of a share_threshold prefix
// apart.
func TestOverrideOfNeverRefusingLimit(t *testing.T) {
	const config = `
domain: edge
descriptors:
  - key: shadowed
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1, name: sh}
  - key: quota
    quota_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: shared
    value: files/*
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 2}
`
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, config, rls.Options{})
		for _, key := range []string{"shadowed", "quota"} {
			once := func() *ratelimitv3.RateLimitDescriptor {
				return limited(desc(key, "v"), 1, typev3.RateLimitUnit_HOUR, 0)
			}
			same(t, key+": the override's one", summary(ask(t, c, once())), []any{ok, ok, uint32(0)})
			res := ask(t, c, once())
			same(t, key+": the override refuses", summary(res), []any{over, over, uint32(0)})
			wantLimit(t, key, res.Statuses[0], "", 1, rlsv3.RateLimitResponse_RateLimit_HOUR, 0)
		}

		// Without an override the prefix pools its values: a and b spend
		// its 2. Under one, c counts on its own.
		same(t, "files/a", summary(ask(t, c, desc("shared", "files/a"))), []any{ok, ok, uint32(1)})
		same(t, "files/b", summary(ask(t, c, desc("shared", "files/b"))), []any{ok, ok, uint32(0)})
		same(t, "files/c under an override", summary(ask(t, c, limited(desc("shared", "files/c"), 2, typev3.RateLimitUnit_HOUR, 0))), []any{ok, ok, uint32(1)})
	})
}
