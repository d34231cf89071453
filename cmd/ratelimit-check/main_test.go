package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun: a valid file prints its rules as understood and exits 0; a file
// with problems prints each with its position and exits 1.
func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	if got := run([]string{"../../examples/config/ratelimit.yaml"}, &out, &errs); got != 0 {
		t.Fatalf("exit %d: %s", got, errs.String())
	}
	for _, want := range []string{"ratelimit.yaml: ok", "rule per-ip: SlidingWindow(20 per 1m0s) by ip", "stack login: login; matches POST /login"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - name: a\n    key: {func: user}\n    gcra: 10/s\nstacks:\n  - name: s\n    rules: [a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errs.Reset()
	if got := run([]string{bad}, &out, &errs); got != 1 || !strings.Contains(errs.String(), "bad.yaml:3:17: rules[0].key.func: found \"user\"") {
		t.Errorf("exit %d, stderr %s", got, errs.String())
	}
	errs.Reset()
	if got := run([]string{"-funcs", "user", bad}, &out, &errs); got != 0 {
		t.Errorf("with -funcs user: exit %d, stderr %s", got, errs.String())
	}
}
