package main_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// TestRulesFile: RATELIMIT_RULES_FILE serves the Envoy stacks of a rules
// file of the library's format, prints its rules at /rlconfig, and
// reloads it when it changes, with the counts kept.
func TestRulesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratelimit.yaml")
	src := func(n string) []byte {
		return []byte("rules:\n  - name: per-user\n    key: {descriptor: user}\n    fixed_window: " + n + "/1d\n" +
			"stacks:\n  - name: edge\n    domain: mine\n    rules: [per-user]\n")
	}
	if err := os.WriteFile(path, src("1"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT=", "RATELIMIT_RULES_FILE="+path)
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].GetCurrentLimit().GetName() != "per-user" {
		t.Fatalf("first call: %v, want OK under per-user", res)
	}
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("second call: %v, want OVER_LIMIT", res)
	}
	res, err := http.Get("http://" + p.debug + "/rlconfig")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"rule per-user: FixedWindow(1 per 24h0m0s) by descriptor user (hashed)\n", "stack edge: per-user; Envoy domain mine\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/rlconfig lacks %q:\n%s", want, body)
		}
	}
	if err := os.WriteFile(path, src("2"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A refused call consumes nothing: call until the new limit admits
	// the second unit, then the count kept refuses the third.
	deadline := time.Now().Add(20 * time.Second)
	for call(t, p.grpc, "mine", "user", "u1").OverallCode != rlsv3.RateLimitResponse_OK {
		if time.Now().After(deadline) {
			t.Fatal("the edit was not reloaded")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res := call(t, p.grpc, "mine", "user", "u1"); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT || res.Statuses[0].GetCurrentLimit().GetRequestsPerUnit() != 2 {
		t.Fatalf("third call: %v, want OVER_LIMIT under 2 per day", res)
	}
	if out := stop(t, cmd, rest); !strings.Contains(out, "the Envoy stacks of "+path) {
		t.Errorf("the greeting does not name the rules file:\n%s", out)
	}
}
