package main_test

import (
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// TestCacheKeyPrefix: CACHE_KEY_PREFIX puts a server's keys under a
// prefix of their own, as the reference does, so that deployments that
// share a Redis (staging and production, two meshes) keep their counts
// apart; servers of one prefix share theirs. A prefix with braces (which
// would choose Redis Cluster slots) fails the start, naming the variable.
func TestCacheKeyPrefix(t *testing.T) {
	redisAddr := testredis.Start(t)
	_, env := runtimeDir(t, map[string]string{"mine.yaml": "domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: 1}\n"})
	env = append(env, "REDIS_URL="+redisAddr)
	bin := build(t)
	server := func(prefix string) string {
		cmd, p, rest := start(t, bin, append(env, "CACHE_KEY_PREFIX="+prefix)...)
		t.Cleanup(func() { stop(t, cmd, rest) })
		return p.grpc
	}
	staging, production, again := server("staging_"), server("production_"), server("staging_")
	for _, c := range []struct {
		addr string
		want rlsv3.RateLimitResponse_Code
	}{
		{staging, rlsv3.RateLimitResponse_OK},
		{production, rlsv3.RateLimitResponse_OK},    // a count of its own
		{again, rlsv3.RateLimitResponse_OVER_LIMIT}, // staging's count
	} {
		if res := call(t, c.addr, "mine", "user", "u1"); res.OverallCode != c.want {
			t.Errorf("%s: %v, want %v", c.addr, res.OverallCode, c.want)
		}
	}
	out := startFails(t, bin, append(env, "CACHE_KEY_PREFIX={tag}")...)
	if !strings.Contains(out, "CACHE_KEY_PREFIX") {
		t.Errorf("a prefix with braces: %s, want an error naming CACHE_KEY_PREFIX", out)
	}
}
