package config_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// padded is a valid rules file of n bytes or more: its rules, then a
// comment.
func padded(n int) string {
	const rules = "rules:\n  - name: all\n    key: {constant: all}\n    fixed_window: 1/1h\nstacks:\n  - name: api\n    rules: [all]\n"
	return rules + "# " + strings.Repeat("x", max(0, n-len(rules)-3)) + "\n"
}

// TestHugeFileRefused: a file of more than 4 MiB is refused
// by Load, Check and Reload (which keeps the rules in force), before it
// is parsed, whose memory grows with the file; one of 4 MiB
// is read.
func TestHugeFileRefused(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, []byte(padded(yamlnode.MaxFileSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := func(what, file string, err error) {
		t.Helper()
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(fmt.Sprint(err), file+": found more than 4194304 bytes") {
			t.Errorf("%s: %v, want a configuration error naming the file and the size", what, err)
		}
	}
	_, err := config.Load(huge, memstore.Must())
	refused("Load", "huge.yaml", err)
	_, err = config.Check(huge)
	refused("Check", "huge.yaml", err)

	limits, path := load(t, memstore.Must(), padded(yamlnode.MaxFileSize))
	if err := os.Rename(huge, path); err != nil {
		t.Fatal(err)
	}
	refused("Reload", "rules.yaml", limits.Reload())
	if _, err := limits.Status(context.Background(), "all", "all", ""); err != nil {
		t.Errorf("the rules in force after the refused reload: %v", err)
	}
}
