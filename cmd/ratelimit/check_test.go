package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
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

// TestRunEnvoy: a file with a top-level domain is checked in the
// reference server's format: a valid one prints its limits and rules and
// exits 0; one with problems prints each at its file:line:column and
// exits 1, and with -json lists them as config.Problem; -h says how the
// formats are told apart.
func TestRunEnvoy(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "edge.yaml")
	if err := os.WriteFile(good, []byte("domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: second, requests_per_unit: 10}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("domain: edge\ndescriptors:\n  - key: a\n    rate_limt: {unit: second}\n  - key: b\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if got := run([]string{"check", good}, &out, &errs); got != 0 {
		t.Fatalf("exit %d: %s", got, errs.String())
	}
	for _, want := range []string{"edge.yaml: ok", "the reference server's format, domain edge", "edge.remote_address: unit=SECOND requests_per_unit=10", "rule edge.remote_address: FixedWindow(10 per 1s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if got := run([]string{"check", bad}, &out, &errs); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	for _, want := range []string{bad + ":4:5: descriptors[0].rate_limt: found an unknown key", bad + ":6:24: descriptors[1].rate_limit.unit: found \"fortnight\""} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs.String())
		}
	}
	errs.Reset()
	if got := run([]string{"check", "-json", bad}, &out, &errs); got != 1 {
		t.Fatalf("-json: exit %d, want 1", got)
	}
	var problems []config.Problem
	if err := json.Unmarshal(out.Bytes(), &problems); err != nil || len(problems) != 2 || problems[0].Line != 4 || problems[1].Column != 24 {
		t.Errorf("-json: %v, %+v, want the two problems at 4:5 and 6:24", err, problems)
	}
	errs.Reset()
	if got := run([]string{"check", "-h"}, &out, &errs); got != 2 || !strings.Contains(errs.String(), "top-level domain key") {
		t.Errorf("-h: exit %d, %s; want it to say how the formats are told apart", got, errs.String())
	}
}

// TestRunHugeFile: a file of more than yamlnode.MaxFileSize bytes, in
// either format, is a problem naming the file and its size, found before
// it is parsed.
func TestRunHugeFile(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.yaml")
	src := "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n# " + strings.Repeat("x", yamlnode.MaxFileSize) + "\n"
	if err := os.WriteFile(huge, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if got := run([]string{"check", huge}, &out, &errs); got != 1 || !strings.Contains(errs.String(), "huge.yaml: found more than 4194304 bytes") {
		t.Errorf("exit %d, stdout %.200s, stderr %s", got, out.String(), errs.String())
	}
}
