package rls_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

const (
	ok   = rlsv3.RateLimitResponse_OK
	over = rlsv3.RateLimitResponse_OVER_LIMIT
)

const serverConfig = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: day, requests_per_unit: 3, name: per-ip}
  - key: tenant
    rate_limit: {unit: day, requests_per_unit: 100}
    descriptors:
      - key: path
        value: /api/*
        rate_limit: {unit: minute, requests_per_unit: 2}
      - key: path
        value: /health
        rate_limit: {unlimited: true}
  - key: beta
    shadow_mode: true
    rate_limit: {unit: day, requests_per_unit: 1}
`

// desc is a descriptor of key and value pairs.
func desc(kv ...string) *ratelimitv3.RateLimitDescriptor {
	d := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

// hits is d with its own hits_addend.
func hits(d *ratelimitv3.RateLimitDescriptor, n uint64) *ratelimitv3.RateLimitDescriptor {
	d.HitsAddend = wrapperspb.UInt64(n)
	return d
}

func ask(t *testing.T, c rlsv3.RateLimitServiceClient, ds ...*ratelimitv3.RateLimitDescriptor) *rlsv3.RateLimitResponse {
	t.Helper()
	res, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: ds})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Statuses) != len(ds) {
		t.Fatalf("%d statuses for %d descriptors", len(res.Statuses), len(ds))
	}
	return res
}

// codes lists the overall code then each descriptor's, and remaining
// units, for comparing at a glance.
func summary(res *rlsv3.RateLimitResponse) []any {
	out := []any{res.OverallCode}
	for _, s := range res.Statuses {
		out = append(out, s.Code, s.LimitRemaining)
	}
	return out
}

func same(t *testing.T, what string, got, want []any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

func TestDescriptorFields(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		res := ask(t, c, desc("remote_address", "10.0.0.1"), desc("tenant", "t1", "path", "/api/users"), desc("tenant", "t1", "path", "/health"), desc("unknown", "x"))
		same(t, "first", summary(res), []any{ok, ok, uint32(2), ok, uint32(1), ok, uint32(math.MaxUint32), ok, uint32(0)}) // unlimited: 2^32-1 left, as the reference says
		ip := res.Statuses[0]
		if l := ip.CurrentLimit; l.GetName() != "per-ip" || l.GetRequestsPerUnit() != 3 || l.GetUnit() != rlsv3.RateLimitResponse_RateLimit_DAY {
			t.Errorf("current_limit %v, want per-ip, 3 per DAY", l)
		}
		api := res.Statuses[1]
		if l := api.CurrentLimit; l.GetRequestsPerUnit() != 2 || l.GetUnit() != rlsv3.RateLimitResponse_RateLimit_MINUTE {
			t.Errorf("wildcard current_limit %v, want 2 per MINUTE", l)
		}
		for i, s := range res.Statuses[2:] {
			if s.CurrentLimit != nil || s.DurationUntilReset != nil {
				t.Errorf("status %d (unlimited or unmatched) has a limit: %v", i+2, s)
			}
		}
		reset := api.DurationUntilReset.AsDuration()
		switch {
		case b.mini != nil && reset != 30*time.Second:
			t.Errorf("duration_until_reset %v, want 30s (the clock is at hh:mm:30)", reset)
		case reset <= 0 || reset > time.Minute:
			t.Errorf("duration_until_reset %v, want within the minute", reset)
		}
		if d := ip.DurationUntilReset.AsDuration(); d <= 0 || d > 24*time.Hour {
			t.Errorf("per-ip duration_until_reset %v, want within the day", d)
		}
		// Another value under the wildcard shares its entry but not its count.
		res = ask(t, c, desc("tenant", "t1", "path", "/api/orders"), desc("tenant", "t2", "path", "/api/users"))
		same(t, "other values", summary(res), []any{ok, ok, uint32(1), ok, uint32(1)})
		res = ask(t, c, desc("tenant", "t1", "path", "/api/users"))
		same(t, "wildcard's second", summary(res), []any{ok, ok, uint32(0)})
		res = ask(t, c, desc("tenant", "t1", "path", "/api/users"))
		same(t, "wildcard over", summary(res), []any{over, over, uint32(0)})
	})
}

func TestAllOrNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		same(t, "spend the api limit", summary(ask(t, c, hits(desc("tenant", "t1", "path", "/api/x"), 2))), []any{ok, ok, uint32(0)})
		// The api descriptor refuses: the per-ip and tenant descriptors
		// consume nothing, however often the request comes, and report
		// what they have left.
		for range 3 {
			res := ask(t, c, desc("remote_address", "10.0.0.9"), desc("tenant", "t1"), desc("tenant", "t1", "path", "/api/x"))
			same(t, "refused", summary(res), []any{over, ok, uint32(3), ok, uint32(100), over, uint32(0)})
		}
		res := ask(t, c, desc("remote_address", "10.0.0.9"), desc("tenant", "t1"))
		same(t, "the others untouched", summary(res), []any{ok, ok, uint32(2), ok, uint32(99)})
	})
}

func TestHitsAddend(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		same(t, "peek", summary(ask(t, c, hits(desc("remote_address", "a"), 0))), []any{ok, ok, uint32(3)})
		same(t, "peek again", summary(ask(t, c, hits(desc("remote_address", "a"), 0))), []any{ok, ok, uint32(3)})
		same(t, "two", summary(ask(t, c, hits(desc("remote_address", "a"), 2))), []any{ok, ok, uint32(1)})
		same(t, "two more", summary(ask(t, c, hits(desc("remote_address", "a"), 2))), []any{over, over, uint32(0)})
		same(t, "one fits", summary(ask(t, c, desc("remote_address", "a"))), []any{ok, ok, uint32(0)})

		// The request's hits_addend applies to descriptors without their own;
		// two descriptors of one identity add up in one check.
		res, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", HitsAddend: 2,
			Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "b"), hits(desc("remote_address", "b"), 1)}})
		if err != nil {
			t.Fatal(err)
		}
		same(t, "request's addend", summary(res), []any{ok, ok, uint32(0), ok, uint32(0)})
	})
}

func TestShadowMode(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		same(t, "first", summary(ask(t, c, desc("beta", "u"))), []any{ok, ok, uint32(0)})
		// The shadow descriptor would refuse: its status says so, the
		// answer does not.
		same(t, "would refuse", summary(ask(t, c, desc("beta", "u"))), []any{ok, over, uint32(0)})

		global := serve(t, b, serverConfig, rls.Options{ShadowMode: true})
		ask(t, global, hits(desc("remote_address", "s"), 3))
		same(t, "global shadow mode", summary(ask(t, global, desc("remote_address", "s"))), []any{ok, over, uint32(0)})
	})
}

func TestInvalidRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		for name, req := range map[string]*rlsv3.RateLimitRequest{
			"no domain":      {Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "a")}},
			"no descriptors": {Domain: "edge"},
			"negative hits":  {Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: desc("remote_address", "a").Entries, IsNegativeHits: true}}},
		} {
			if _, err := c.ShouldRateLimit(context.Background(), req); status.Code(err) != codes.InvalidArgument {
				t.Errorf("%s: %v, want InvalidArgument", name, err)
			}
		}
		res, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "other", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "a")}})
		if err != nil || res.OverallCode != ok || res.Statuses[0].CurrentLimit != nil {
			t.Errorf("unknown domain: %v, %v; want OK with no limit", res, err)
		}
	})
}

func TestRedisDown(t *testing.T) {
	cfg, err := rls.Parse("test.yaml", []byte(serverConfig))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + itoa(freePort(t)), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := redisstore.New(rdb)
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(s, rls.Limits(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var seen []error
	closed, err := rls.NewServer(lim, []*rls.Config{cfg}, rls.Options{OnError: func(err error) { seen = append(seen, err) }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dial(t, closed).ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "secret-value")}})
	if status.Code(err) != codes.Unavailable {
		t.Errorf("Redis down: %v, want Unavailable", err)
	}
	if len(seen) != 1 || !errors.Is(seen[0], limiter.ErrBackend) {
		t.Fatalf("errors reported %v, want one backend error", seen)
	}
	if strings.Contains(seen[0].Error(), "secret-value") || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("a descriptor's value leaked into an error: %v; %v", seen[0], err)
	}
	open, err := rls.NewServer(lim, []*rls.Config{cfg}, rls.Options{FailOpen: true, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := dial(t, open).ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "a")}})
	if err != nil || res.OverallCode != ok || res.Statuses[0].GetCurrentLimit().GetRequestsPerUnit() != 3 {
		t.Errorf("fail open: %v, %v; want OK with the limit", res, err)
	}
}

// TestNegativeHitsRefused: is_negative_hits would give units back
// without naming the decision that took them, which cannot be exact (a
// window may have rolled, a bucket refilled, since): it is refused, and
// the answer says why.
func TestNegativeHitsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{})
		ask(t, c, hits(desc("remote_address", "n"), 3))
		neg := hits(desc("remote_address", "n"), 2)
		neg.IsNegativeHits = true
		_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{neg}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "is_negative_hits is refused") || !strings.Contains(err.Error(), "more than was taken") {
			t.Errorf("negative hits: %v, want InvalidArgument saying why", err)
		}
		same(t, "nothing given back", summary(ask(t, c, desc("remote_address", "n"))), []any{over, over, uint32(0)})
	})
}
