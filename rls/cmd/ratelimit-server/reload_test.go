package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// perDay is a config of domain "mine" admitting n calls a day per user.
func perDay(n string) string {
	return "domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: " + n + "}\n"
}

// testStore is a store on a miniredis whose clock is fixed.
func testStore(t *testing.T) store.Store {
	t.Helper()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 1, 2, 10, 0, 30, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.WithTimeout(10*time.Second)) // a slow test machine is no outage
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// testService is a service watching dir on testStore, logging into the
// returned buffer.
func testService(t *testing.T, dir string) (*service, *bytes.Buffer) {
	t.Helper()
	return testServiceOf(t, settings{configDir: dir})
}

// testServiceOf is testService of s's runtime directory, loaded as s says.
func testServiceOf(t *testing.T, s settings) (*service, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	svc, err := newService(testStore(t), rls.Options{}, s.configDir, func() ([]*rls.Config, error) { return loadConfigs(s) },
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.close() })
	return svc, &logs
}

// decide calls svc for user u and returns the code and limit_remaining.
func decide(t *testing.T, svc *service, key, u string) (rlsv3.RateLimitResponse_Code, uint32) {
	t.Helper()
	res, err := svc.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{
		Domain:      "mine",
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: key, Value: u}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.OverallCode, res.Statuses[0].GetLimitRemaining()
}

// admits checks how many further calls for user u the service admits
// today (at most 10).
func admits(t *testing.T, svc *service, u string) int {
	t.Helper()
	for n := range 10 {
		if code, _ := decide(t, svc, "user", u); code != rlsv3.RateLimitResponse_OK {
			return n
		}
	}
	return 10
}

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// swapLink points link at target atomically, as Kubernetes swaps ..data.
func swapLink(t *testing.T, target, link string) {
	t.Helper()
	tmp := link + ".tmp"
	symlink(t, target, tmp)
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

func TestReloadEditInPlace(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mine.yaml"), perDay("1"))
	svc, _ := testService(t, dir)
	if n := admits(t, svc, "a"); n != 1 {
		t.Fatalf("before the edit: %d admitted, want 1", n)
	}
	write(t, filepath.Join(dir, "mine.yaml"), perDay("10"))
	svc.poll()
	if n := admits(t, svc, "b"); n != 10 {
		t.Fatalf("after the edit: %d admitted, want 10", n)
	}
	// Another requests_per_unit, the same window: the count is kept.
	if n := admits(t, svc, "a"); n != 9 {
		t.Fatalf("after the edit, a was admitted %d more times, want 9", n)
	}
}

func TestReloadEditorRename(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mine.yaml"), perDay("1"))
	svc, _ := testService(t, dir)
	// The same size, written elsewhere and renamed over the file.
	write(t, filepath.Join(dir, "mine.yaml~"), perDay("3"))
	if err := os.Rename(filepath.Join(dir, "mine.yaml~"), filepath.Join(dir, "mine.yaml")); err != nil {
		t.Fatal(err)
	}
	svc.poll()
	if n := admits(t, svc, "a"); n != 3 {
		t.Fatalf("after the rename: %d admitted, want 3", n)
	}
}

func TestReloadConfigMapSwap(t *testing.T) {
	// A ConfigMap volume: config/mine.yaml -> ..data/mine.yaml, and
	// ..data -> the timestamped directory of the current version.
	dir := t.TempDir()
	write(t, filepath.Join(dir, "..2026_01_02_10_00_00.1", "mine.yaml"), perDay("1"))
	symlink(t, "..2026_01_02_10_00_00.1", filepath.Join(dir, "..data"))
	symlink(t, filepath.Join("..data", "mine.yaml"), filepath.Join(dir, "mine.yaml"))
	svc, _ := testService(t, dir)
	write(t, filepath.Join(dir, "..2026_01_02_10_05_00.2", "mine.yaml"), perDay("3"))
	swapLink(t, "..2026_01_02_10_05_00.2", filepath.Join(dir, "..data"))
	svc.poll()
	if n := admits(t, svc, "a"); n != 3 {
		t.Fatalf("after the ..data swap: %d admitted, want 3", n)
	}
}

func TestReloadRootSwap(t *testing.T) {
	// RUNTIME_ROOT is a symlink to the current version, swapped whole.
	base := t.TempDir()
	write(t, filepath.Join(base, "v1", "rl", "config", "mine.yaml"), perDay("1"))
	write(t, filepath.Join(base, "v2", "rl", "config", "mine.yaml"), perDay("3"))
	symlink(t, "v1", filepath.Join(base, "current"))
	svc, _ := testService(t, filepath.Join(base, "current", "rl", "config"))
	swapLink(t, "v2", filepath.Join(base, "current"))
	svc.poll()
	if n := admits(t, svc, "a"); n != 3 {
		t.Fatalf("after the root swap: %d admitted, want 3", n)
	}
}

func TestReloadInvalidKeepsConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	write(t, path, perDay("2"))
	svc, logs := testService(t, dir)
	write(t, path, "domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: fortnight, requests_per_unit: 10}\n")
	svc.poll()
	if n := admits(t, svc, "a"); n != 2 {
		t.Fatalf("after an invalid edit: %d admitted, want the 2 in force", n)
	}
	_, err := svc.state()
	at := path + ":4:"
	if err == nil || !strings.Contains(err.Error(), at) || !strings.Contains(logs.String(), at) {
		t.Fatalf("the reload error (%v) or the log (%s) does not name %s", err, logs, at)
	}
	svc.poll() // unchanged: not reported again
	if got := strings.Count(logs.String(), "reload failed"); got != 1 {
		t.Fatalf("the failure was logged %d times, want once:\n%s", got, logs)
	}
	write(t, path, perDay("3"))
	svc.poll()
	if _, err := svc.state(); err != nil {
		t.Fatalf("a valid edit left the error: %v", err)
	}
	if n := admits(t, svc, "b"); n != 3 {
		t.Fatalf("after the fix: %d admitted, want 3", n)
	}
}

func TestReloadKeepsCounts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	write(t, path, perDay("3"))
	svc, _ := testService(t, dir)
	if n := admits(t, svc, "a"); n != 3 {
		t.Fatalf("before: %d admitted, want 3", n)
	}
	if _, left := decide(t, svc, "user", "b"); left != 2 {
		t.Fatalf("b's first call leaves %d, want 2", left)
	}
	before := svc.cur.Load().lim.Rules()
	// Another descriptor added before it: "user" is kept as it was.
	write(t, path, "domain: mine\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: hour, requests_per_unit: 7}\n"+strings.TrimPrefix(perDay("3"), "domain: mine\ndescriptors:\n"))
	svc.poll()
	after := svc.cur.Load().lim.Rules()
	if len(after) != 3 { // two descriptors' and the domain's override rule
		t.Fatalf("the reload was not applied: rules %v", after)
	}
	if !hasRule(after, before[0].Name) {
		t.Fatalf("the kept descriptor's rule %q was renamed: %v", before[0].Name, after)
	}
	if n := admits(t, svc, "a"); n != 0 {
		t.Fatalf("a, at its limit before the reload, was admitted %d more times", n)
	}
	if _, left := decide(t, svc, "user", "b"); left != 1 {
		t.Fatalf("b's second call leaves %d, want 1: its count started afresh", left)
	}
	if _, left := decide(t, svc, "tenant", "t"); left != 6 {
		t.Fatalf("the new descriptor leaves %d, want 6", left)
	}
}

// TestReloadMergedKeepsCounts: under MERGE_DOMAIN_CONFIG, a domain's
// second file is merged into it, and a reload that adds a third keeps the
// counts of the descriptors kept, whichever file gives them.
func TestReloadMergedKeepsCounts(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), perDay("3"))
	write(t, filepath.Join(dir, "b.yaml"), "domain: mine\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: hour, requests_per_unit: 7}\n")
	getenv := env("RUNTIME_ROOT="+dir, "RUNTIME_APPDIRECTORY=.", "MERGE_DOMAIN_CONFIG=true")
	s, err := readEnv(getenv)
	if err != nil || !s.mergeDomains {
		t.Fatalf("MERGE_DOMAIN_CONFIG=true read as %v (error %v)", s.mergeDomains, err)
	}
	svc, _ := testServiceOf(t, s)
	if n := admits(t, svc, "a"); n != 3 {
		t.Fatalf("before: %d admitted, want 3", n)
	}
	if _, left := decide(t, svc, "tenant", "t"); left != 6 {
		t.Fatalf("the second file's descriptor leaves %d, want 6", left)
	}
	write(t, filepath.Join(dir, "c.yaml"), "domain: mine\ndescriptors:\n  - key: path\n    rate_limit: {unit: hour, requests_per_unit: 2}\n")
	svc.poll()
	if rules := svc.cur.Load().lim.Rules(); len(rules) != 4 { // three descriptors' and the domain's override rule
		t.Fatalf("the reload was not applied: rules %v", rules)
	}
	if n := admits(t, svc, "a"); n != 0 {
		t.Fatalf("a, at its limit before the reload, was admitted %d more times", n)
	}
	if _, left := decide(t, svc, "tenant", "t"); left != 5 {
		t.Fatalf("the tenant's second call leaves %d, want 5: its count started afresh", left)
	}
	if _, left := decide(t, svc, "path", "p"); left != 1 {
		t.Fatalf("the third file's descriptor leaves %d, want 1", left)
	}
}

func hasRule(rules []limiter.Rule, name string) bool {
	for _, r := range rules {
		if r.Name == name {
			return true
		}
	}
	return false
}

func TestReloadWaitsForCallsUnderWay(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mine.yaml"), perDay("1"))
	svc, _ := testService(t, dir)
	old := svc.cur.Load()
	old.mu.RLock() // a call under way on the first generation
	write(t, filepath.Join(dir, "mine.yaml"), perDay("10"))
	reloaded := make(chan struct{})
	go func() { svc.poll(); close(reloaded) }()
	for deadline := time.Now().Add(10 * time.Second); svc.cur.Load() == old; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the new generation was not swapped in while a call was under way on the old one")
		}
	}
	if n := admits(t, svc, "a"); n != 10 {
		t.Fatalf("new calls: %d admitted, want the new generation's 10", n)
	}
	select {
	case <-reloaded:
		t.Fatal("the old generation was retired with a call under way")
	default:
	}
	old.mu.RUnlock()
	select {
	case <-reloaded:
	case <-time.After(10 * time.Second):
		t.Fatal("the reload did not finish once the call had returned")
	}
	if !old.retired {
		t.Fatal("the old generation was not retired")
	}
}
