package rls_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// fileRules is a rules file of the library's own format with an HTTP
// stack and an Envoy stack (domain edge) that share the rule per-ip.
const fileRules = `
rules:
  - name: per-ip
    key: ip
    fixed_window: 3/1h
  - name: per-path
    key: {descriptor: path}
    fixed_window: 2/1h
    plans:
      descriptor: path
      values:
        /health: {fixed_window: 100/1h}
  - name: tenant-path
    key: {join: [{descriptor: tenant}, {descriptor: path}]}
    token_bucket: 5/1h
stacks:
  - name: web
    rules: [per-ip]
  - name: edge
    domain: edge
    rules: [per-ip, per-path, tenant-path]
`

// serveFile writes src to a file, loads it on miniredis (its clock at a
// fixed instant) and serves its Envoy stacks behind a loopback gRPC
// listener: the Limits, for the test to reload or wire, the file's path
// and a client.
func serveFile(t *testing.T, src string) (*config.Limits, string, rlsv3.RateLimitServiceClient) {
	t.Helper()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 1, 2, 10, 0, 30, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.WithTimeout(storeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ratelimit.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := config.Load(path, st, config.WithLimiterOptions(limiter.WithDenyCache(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	srv, err := rls.FromFile(l, rls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l, path, dial(t, srv)
}

// TestFileOneKey: a rule keyed by one descriptor key limits the
// descriptors of its domain with exactly that key, each value counted
// apart, and reports its limit; a descriptor no rule reads is not limited.
func TestFileOneKey(t *testing.T) {
	_, _, c := serveFile(t, fileRules)
	res := ask(t, c, desc("path", "/a"), desc("path", "/b"), desc("other", "x"), desc("path", "/a", "other", "x"))
	same(t, "first", summary(res), []any{ok, ok, uint32(1), ok, uint32(1), ok, uint32(0), ok, uint32(0)})
	l := res.Statuses[0].CurrentLimit
	if l.GetName() != "per-path" || l.GetRequestsPerUnit() != 2 || l.GetUnit() != rlsv3.RateLimitResponse_RateLimit_HOUR || l.GetUnitMultiplier() != nil {
		t.Errorf("current_limit %v, want per-path, 2 per HOUR", l)
	}
	if d := res.Statuses[0].DurationUntilReset.AsDuration(); d != 59*time.Minute+30*time.Second {
		t.Errorf("duration_until_reset %v, want 59m30s (the clock is at 10:00:30, windows aligned to the hour)", d)
	}
	for i, s := range res.Statuses[2:] {
		if s.CurrentLimit != nil {
			t.Errorf("status %d matched no rule, yet has a limit: %v", i+2, s.CurrentLimit)
		}
	}
	same(t, "second", summary(ask(t, c, desc("path", "/a"))), []any{ok, ok, uint32(0)})
	same(t, "third", summary(ask(t, c, desc("path", "/a"))), []any{over, over, uint32(0)})
	same(t, "another value", summary(ask(t, c, desc("path", "/b"))), []any{ok, ok, uint32(0)})
	// Another domain has no stack: nothing is limited.
	res, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "other", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("path", "/a")}})
	if err != nil || res.OverallCode != ok || res.Statuses[0].CurrentLimit != nil {
		t.Errorf("a domain without a stack: %v, %v; want OK without a limit", res, err)
	}
}

// TestFileTwoKeys: a rule keyed by a join of two descriptor keys limits
// the descriptors with exactly those keys in that order, by both values;
// the rule of one of the keys does not apply to them.
func TestFileTwoKeys(t *testing.T) {
	_, _, c := serveFile(t, fileRules)
	res := ask(t, c, hits(desc("tenant", "acme", "path", "/a"), 4))
	same(t, "first", summary(res), []any{ok, ok, uint32(1)})
	if l := res.Statuses[0].CurrentLimit; l.GetName() != "tenant-path" || l.GetRequestsPerUnit() != 5 || l.GetUnit() != rlsv3.RateLimitResponse_RateLimit_HOUR {
		t.Errorf("current_limit %v, want tenant-path, 5 per HOUR", l)
	}
	same(t, "other tenant", summary(ask(t, c, desc("tenant", "globex", "path", "/a"))), []any{ok, ok, uint32(4)})
	same(t, "the path's own rule is untouched", summary(ask(t, c, desc("path", "/a"))), []any{ok, ok, uint32(1)})
	same(t, "keys in another order match nothing", summary(ask(t, c, desc("path", "/a", "tenant", "acme"))), []any{ok, ok, uint32(0)})
	same(t, "fifth", summary(ask(t, c, desc("tenant", "acme", "path", "/a"))), []any{ok, ok, uint32(0)})
	same(t, "sixth", summary(ask(t, c, desc("tenant", "acme", "path", "/a"))), []any{over, over, uint32(0)})
}

// TestFilePlanByValue: a plan chosen by a descriptor's value is that
// value's limit, reported as current_limit; other values keep the rule's.
func TestFilePlanByValue(t *testing.T) {
	_, _, c := serveFile(t, fileRules)
	for i := range 5 {
		res := ask(t, c, desc("path", "/health"))
		same(t, "health", summary(res), []any{ok, ok, uint32(99 - i)})
		if l := res.Statuses[0].CurrentLimit; l.GetName() != "per-path" || l.GetRequestsPerUnit() != 100 {
			t.Fatalf("current_limit %v, want per-path's plan, 100 per HOUR", l)
		}
	}
	same(t, "another value, the rule's limit", summary(ask(t, c, hits(desc("path", "/x"), 2))), []any{ok, ok, uint32(0)})
	same(t, "and over it", summary(ask(t, c, desc("path", "/x"))), []any{over, over, uint32(0)})
}

// TestFileAllOrNothing: the descriptors of a request are decided
// together: when one is over its limit, the others consume nothing. Two
// descriptors of one rule with other values are two checks.
func TestFileAllOrNothing(t *testing.T) {
	_, _, c := serveFile(t, fileRules)
	same(t, "both", summary(ask(t, c, desc("path", "/x"), desc("path", "/y"))), []any{ok, ok, uint32(1), ok, uint32(1)})
	same(t, "spend /y", summary(ask(t, c, desc("path", "/y"))), []any{ok, ok, uint32(0)})
	for range 3 {
		res := ask(t, c, desc("path", "/x"), desc("path", "/y"), desc("remote_address", "192.0.2.7"))
		if res.OverallCode != over || res.Statuses[1].Code != over {
			t.Fatalf("with /y spent: %v, want OVER_LIMIT by /y", summary(res))
		}
	}
	same(t, "/x kept its unit", summary(ask(t, c, desc("path", "/x"))), []any{ok, ok, uint32(0)})
	same(t, "the address spent nothing", summary(ask(t, c, desc("remote_address", "192.0.2.7"))), []any{ok, ok, uint32(2)})
}

// TestFileSharedRule: a rule in an HTTP stack and an Envoy stack is one
// rule of one limiter: an ip identity, the HTTP request's address or
// the descriptor's remote_address, keeps one count across both doors.
func TestFileSharedRule(t *testing.T) {
	l, _, c := serveFile(t, fileRules)
	web := l.Middleware("web")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	get := func() int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.7:40000"
		web.ServeHTTP(w, r)
		return w.Code
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("HTTP: %d, want 200", code)
	}
	same(t, "Envoy after HTTP", summary(ask(t, c, desc("remote_address", "192.0.2.7"))), []any{ok, ok, uint32(1)})
	if code := get(); code != http.StatusOK {
		t.Fatalf("HTTP: %d, want 200", code)
	}
	same(t, "Envoy over", summary(ask(t, c, desc("remote_address", "192.0.2.7"))), []any{over, over, uint32(0)})
	if code := get(); code != http.StatusTooManyRequests {
		t.Fatalf("HTTP after Envoy spent the limit: %d, want 429", code)
	}
	same(t, "another address", summary(ask(t, c, desc("remote_address", "192.0.2.8"))), []any{ok, ok, uint32(2)})
	// A remote_address that is not an address has no identity.
	_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "not-an-address")}})
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "ratelimit: descriptor 0: no address in descriptor entry remote_address" {
		t.Errorf("a remote_address that is not an address: %v; want INVALID_ARGUMENT naming no value", err)
	}
}

// TestFileReload: a reload of the file changes a limit in force for the
// next request, and the rule keeps its counts.
func TestFileReload(t *testing.T) {
	l, path, c := serveFile(t, fileRules)
	same(t, "spend", summary(ask(t, c, hits(desc("path", "/a"), 2))), []any{ok, ok, uint32(0)})
	same(t, "over", summary(ask(t, c, desc("path", "/a"))), []any{over, over, uint32(0)})
	if err := os.WriteFile(path, []byte(strings.Replace(fileRules, "fixed_window: 2/1h", "fixed_window: 3/1h", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	res := ask(t, c, desc("path", "/a"))
	same(t, "the third of three", summary(res), []any{ok, ok, uint32(0)})
	if n := res.Statuses[0].CurrentLimit.GetRequestsPerUnit(); n != 3 {
		t.Errorf("current_limit %d per unit after the reload, want 3", n)
	}
	same(t, "over again", summary(ask(t, c, desc("path", "/a"))), []any{over, over, uint32(0)})
}

// TestFileLimitOverride: a descriptor's limit override is a plan of the
// rule it matches (in the same state with the same window), and replaces
// the plan its value chose; the file has no override rule, so an
// override on a descriptor no rule matches leaves it unlimited.
func TestFileLimitOverride(t *testing.T) {
	_, _, c := serveFile(t, fileRules)
	perHour := func(d *ratelimitv3.RateLimitDescriptor, n uint32) *ratelimitv3.RateLimitDescriptor {
		return limited(d, n, typev3.RateLimitUnit_HOUR, 0)
	}
	res := ask(t, c, perHour(desc("path", "/a"), 5))
	same(t, "override", summary(res), []any{ok, ok, uint32(4)})
	wantLimit(t, "override", res.Statuses[0], "per-path", 5, rlsv3.RateLimitResponse_RateLimit_HOUR, 0)
	same(t, "the rule's limit, the same count", summary(ask(t, c, desc("path", "/a"))), []any{ok, ok, uint32(0)})
	same(t, "over the rule's limit", summary(ask(t, c, desc("path", "/a"))), []any{over, over, uint32(0)})
	same(t, "the override admits past it", summary(ask(t, c, perHour(desc("path", "/a"), 5))), []any{ok, ok, uint32(2)})

	res = ask(t, c, perHour(desc("path", "/health"), 3))
	same(t, "override of a value's plan", summary(res), []any{ok, ok, uint32(2)})
	wantLimit(t, "override of a value's plan", res.Statuses[0], "per-path", 3, rlsv3.RateLimitResponse_RateLimit_HOUR, 0)
	same(t, "the value's plan again", summary(ask(t, c, desc("path", "/health"))), []any{ok, ok, uint32(98)})

	for i := range 3 {
		res = ask(t, c, limited(desc("other", "x"), 1, typev3.RateLimitUnit_MINUTE, 0))
		if res.OverallCode != ok || res.Statuses[0].CurrentLimit != nil {
			t.Fatalf("unmatched, call %d: %v, want OK with no limit (no override rule)", i, summary(res))
		}
	}
}

// TestFileLimitAbove32Bits: the rules file allows a limit above 2^32-1,
// which current_limit and limit_remaining (uint32) cannot carry: they
// say 2^32-1, not the limit's low 32 bits (5,000,000,000 read as
// 705,032,704).
func TestFileLimitAbove32Bits(t *testing.T) {
	_, _, c := serveFile(t, `
rules:
  - name: big
    key: {descriptor: k}
    fixed_window: 5000000000/1h
stacks:
  - name: edge
    domain: edge
    rules: [big]
`)
	res := ask(t, c, desc("k", "v"))
	same(t, "first", summary(res), []any{ok, ok, uint32(math.MaxUint32)})
	if got := res.Statuses[0].CurrentLimit.GetRequestsPerUnit(); got != math.MaxUint32 {
		t.Errorf("requests_per_unit %d, want %d", got, uint32(math.MaxUint32))
	}
}
