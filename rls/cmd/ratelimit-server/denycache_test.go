package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

func TestLocalCacheSize(t *testing.T) {
	for v, want := range map[string]int{"": 0, "0": 0, "1": 1, "1048576": 2048} {
		s, err := readEnv(env("LOCAL_CACHE_SIZE_IN_BYTES=" + v))
		if err != nil || s.denyEntries != want {
			t.Errorf("LOCAL_CACHE_SIZE_IN_BYTES=%s: %d entries (%v), want %d", v, s.denyEntries, err, want)
		}
	}
	for _, v := range []string{"-1", "1MB"} {
		if _, err := readEnv(env("LOCAL_CACHE_SIZE_IN_BYTES=" + v)); err == nil {
			t.Errorf("LOCAL_CACHE_SIZE_IN_BYTES=%s: no error", v)
		}
	}
}

// TestLocalCache: with LOCAL_CACHE_SIZE_IN_BYTES, a denied client's
// repeated call is denied without a Redis command; without it, or with
// 0, each call asks Redis.
func TestLocalCache(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(perDay("1")), 0o600); err != nil {
		t.Fatal(err)
	}
	for v, cached := range map[string]bool{"": false, "0": false, "65536": true} {
		s, err := readEnv(env("LOCAL_CACHE_SIZE_IN_BYTES="+v, "RUNTIME_ROOT="+dir, "RUNTIME_APPDIRECTORY=."))
		if err != nil {
			t.Fatal(err)
		}
		m := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = rdb.Close() })
		st, err := redisstore.New(rdb, redisstore.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		svc, err := newService(st, rls.Options{}, "", func() ([]*rls.Config, error) { return loadConfigs(s) },
			slog.New(slog.NewTextHandler(io.Discard, nil)), s.limiterOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.close() })
		// A cached denial is trusted for 1 s: a try slower than half
		// that is tried again, with another user.
		for try := range 5 {
			u := "u" + strconv.Itoa(try)
			began := time.Now()
			decide(t, svc, "user", u)
			if code, _ := decide(t, svc, "user", u); code != rlsv3.RateLimitResponse_OVER_LIMIT {
				t.Fatalf("LOCAL_CACHE_SIZE_IN_BYTES=%s: second call %v", v, code)
			}
			before := m.CommandCount()
			code, _ := decide(t, svc, "user", u)
			if time.Since(began) > 500*time.Millisecond && try < 4 {
				continue
			}
			if code != rlsv3.RateLimitResponse_OVER_LIMIT || (m.CommandCount() == before) != cached {
				t.Errorf("LOCAL_CACHE_SIZE_IN_BYTES=%s: third call %v with %d Redis commands, want OVER_LIMIT from the cache: %v",
					v, code, m.CommandCount()-before, cached)
			}
			break
		}
	}
}
