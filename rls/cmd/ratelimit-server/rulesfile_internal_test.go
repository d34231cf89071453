package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// TestRLConfigShowsRulesFileReloadError: /rlconfig prints the rules file
// in force and, after an edit that does not load, that version's problem
// at its line and column beneath them, until a valid version is in force.
func TestRLConfigShowsRulesFileReloadError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratelimit.yaml")
	src := func(limit string) string {
		return "rules:\n  - name: per-user\n    key: {descriptor: user}\n    fixed_window: " + limit + "\n" +
			"stacks:\n  - name: edge\n    domain: mine\n    rules: [per-user]\n"
	}
	write(t, path, src("2/1d"))
	var logs bytes.Buffer
	svc, err := newFileService(memstore.Must(), rls.Options{}, path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.close() })
	h := debugHandler(svc)
	const line = "stack edge: per-user; Envoy domain mine\n"
	if status, body := do(t, h, http.MethodGet, "/rlconfig", ""); status != http.StatusOK || !strings.Contains(body, line) || strings.Contains(body, "reload failed") {
		t.Fatalf("/rlconfig: %d\n%s", status, body)
	}
	write(t, path, src("two a day"))
	if svc.rules.Reload() == nil {
		t.Fatal("an invalid edit reloaded")
	}
	_, body := do(t, h, http.MethodGet, "/rlconfig", "")
	if !strings.Contains(body, "FixedWindow(2 per 24h0m0s)") || !strings.Contains(body, "the last reload failed") || !strings.Contains(body, path+":4:19:") {
		t.Fatalf("/rlconfig after an invalid edit does not show the rules in force and the problem at %s:4:19:\n%s", path, body)
	}
	write(t, path, src("3/1d"))
	if err := svc.rules.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, body := do(t, h, http.MethodGet, "/rlconfig", ""); !strings.Contains(body, "FixedWindow(3 per 24h0m0s)") || strings.Contains(body, "failed") {
		t.Fatalf("/rlconfig after a valid edit:\n%s", body)
	}
}
