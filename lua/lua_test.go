package lua_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/lua"
)

// Every .lua file starts with a comment naming its KEYS, ARGV and reply.
func TestEveryFileDocumentsItsInterface(t *testing.T) {
	files, err := filepath.Glob("*.lua")
	if err != nil || len(files) != 12 {
		t.Fatalf("found %v (%v), want 12 .lua files", files, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var head strings.Builder
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, "--") {
				break
			}
			head.WriteString(line)
		}
		for _, word := range []string{"KEYS", "ARGV", "Reply"} {
			if !strings.Contains(head.String(), word) {
				t.Errorf("%s: the opening comment does not mention %s", f, word)
			}
		}
	}
}

// Every per-set script compiles on a server, and the sets differ.
func TestEveryScriptLoads(t *testing.T) {
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	seen := map[string]bool{}
	for m := lua.Mask(0); m <= lua.All; m++ {
		s := lua.Script(m)
		if err := s.Load(context.Background(), rdb).Err(); err != nil {
			t.Fatalf("mask %06b: %v", m, err)
		}
		if seen[s.Hash()] {
			t.Errorf("mask %06b: the same script as another set", m)
		}
		seen[s.Hash()] = true
	}
	if err := lua.RefundScript.Load(context.Background(), rdb).Err(); err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"fw", "sl", "sw", "tb", "lb", "gc"} {
		if lua.MaskOf(code) == 0 {
			t.Errorf("no bit for %s", code)
		}
	}
}
