package rls_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

func TestLoadDirDotfiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	one := "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n"
	write("a.yaml", one)
	write(".a.yaml", one) // as an editor or a volume might leave it
	write("b.yml", "domain: b\ndescriptors: []\n")
	write("notes.txt", "not a config")
	if err := os.Mkdir(filepath.Join(dir, "..data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "..data", "a.yaml"), []byte(one), 0o600); err != nil {
		t.Fatal(err)
	}

	configs, err := rls.LoadDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) != 2 || configs[0].Domain != "a" || configs[1].Domain != "b" {
		t.Errorf("loaded %d configs, want domains a and b", len(configs))
	}
	_, err = rls.LoadDir(dir, false)
	if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), `domain "a" is configured in`) {
		t.Errorf("with dot files: %v, want domain a twice", err)
	}
}
