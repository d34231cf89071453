package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config"
)

// TestRun: a valid file prints its rules as understood and exits 0; a file
// with problems prints each with its position and exits 1.
func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	if got := run([]string{"check", "../../examples/config/ratelimit.yaml"}, &out, &errs); got != 0 {
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
	if got := run([]string{"check", bad}, &out, &errs); got != 1 || !strings.Contains(errs.String(), "bad.yaml:3:17: rules[0].key.func: found \"user\"") {
		t.Errorf("exit %d, stderr %s", got, errs.String())
	}
	errs.Reset()
	if got := run([]string{"check", "-funcs", "user", bad}, &out, &errs); got != 0 {
		t.Errorf("with -funcs user: exit %d, stderr %s", got, errs.String())
	}
}

// TestRunJSON: with -json, the problems of every file are printed to
// stdout as one JSON array, each with its file, line, column, field and
// message; nothing else is printed, and the exit status is as without it.
func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - name: a\n    key: ipp\n    gcra: 10/s\nstacks:\n  - name: s\n    rules: [a, b]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	var out, errs bytes.Buffer
	if got := run([]string{"check", "-json", "../../examples/config/ratelimit.yaml", bad, missing}, &out, &errs); got != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", got, errs.String())
	}
	var problems []config.Problem
	if err := json.Unmarshal(out.Bytes(), &problems); err != nil {
		t.Fatalf("stdout is not a JSON array of problems: %v\n%s", err, out.String())
	}
	want := []config.Problem{
		{File: bad, Line: 3, Column: 10, Field: "rules[0].key"},
		{File: bad, Line: 7, Column: 16, Field: "stacks[0].rules[1]"},
		{File: missing},
	}
	if len(problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(problems), len(want), out.String())
	}
	for i, p := range problems {
		msg := p.Message
		p.Message = ""
		if p != want[i] || msg == "" {
			t.Errorf("problem %d: got %+v (message %q), want %+v and a message", i, p, msg, want[i])
		}
	}
	if errs.Len() != 0 {
		t.Errorf("stderr: %s", errs.String())
	}
	out.Reset()
	if got := run([]string{"check", "-json", "../../examples/config/ratelimit.yaml"}, &out, &errs); got != 0 || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("a valid file: exit %d, stdout %q, stderr %s", got, out.String(), errs.String())
	}
}
