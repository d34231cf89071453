package main

import (
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// The file's per-key rule counts one API key across both doors: three
// uses pass (HTTP, gRPC, HTTP), the fourth, over gRPC, is refused.
func TestExample(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	defer rdb.Close()
	var out strings.Builder
	if err := run(&out, rdb, "ratelimit.yaml"); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"use 1, over HTTP: 200 OK; RateLimit-Remaining: 2",
		"use 2, over gRPC: Unimplemented",
		"use 3, over HTTP: 200 OK; RateLimit-Remaining: 0",
		"use 4, over gRPC: ResourceExhausted",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
