package envoy_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
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

	configs, err := envoy.LoadDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) != 2 || configs[0].Domain != "a" || configs[1].Domain != "b" {
		t.Errorf("loaded %d configs, want domains a and b", len(configs))
	}
	_, err = envoy.LoadDir(dir, false)
	if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), `domain "a" is configured in`) {
		t.Errorf("with dot files: %v, want domain a twice", err)
	}
}

// TestLoadDirMerged: with MERGE_DOMAIN_CONFIG's merging, two files of one
// domain are one Config whose limits have the names the domain in one
// file gives them (a replaces entry may name a limit of the other file);
// without it they are an error; a top-level descriptor in both files is
// an error naming both positions.
func TestLoadDirMerged(t *testing.T) {
	one := "domain: m\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: 1, name: general}\n  - key: tenant\n    descriptors:\n      - key: path\n        value: /a*\n        rate_limit: {unit: second, requests_per_unit: 5}\n"
	two := "domain: m\ndescriptors:\n  - key: vip\n    rate_limit: {unit: day, requests_per_unit: 3, replaces: [{name: general}]}\n"
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.yaml", one)
	write("2.yaml", two)
	write("other.yaml", "domain: o\ndescriptors: []\n")
	if _, err := envoy.LoadDir(dir, false); !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), `domain "m" is configured in`) {
		t.Errorf("without merging: %v, want domain m twice", err)
	}
	configs, err := envoy.LoadDirMerged(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) != 2 || configs[0].Domain != "m" || configs[1].Domain != "o" {
		t.Fatalf("loaded %d configs, want domains m and o", len(configs))
	}
	whole, err := envoy.Parse("whole.yaml", []byte(one+strings.TrimPrefix(two, "domain: m\ndescriptors:\n")))
	if err != nil {
		t.Fatal(err)
	}
	merged, single := envoy.Limits(configs[0]), envoy.Limits(whole)
	if len(merged) != 4 || len(merged) != len(single) {
		t.Fatalf("merged rules %v, want the 4 of the domain in one file (3 and its override rule), %v", merged, single)
	}
	names := map[string]bool{}
	for _, r := range single {
		names[r.Name] = true
	}
	for _, r := range merged {
		if !names[r.Name] {
			t.Errorf("merged rule %q is not named as in one file (%v)", r.Name, single)
		}
	}

	write("3.yaml", "domain: m\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: day, requests_per_unit: 9}\n  - key: x\n    rate_limit: {unit: day, requests_per_unit: 9, replaces: [{name: nobody}]}\n")
	_, err = envoy.LoadDirMerged(dir, false)
	want := []string{
		filepath.Join(dir, "3.yaml") + ":3:5: descriptors[0]: found a descriptor with key \"tenant\" and value \"\" that " + filepath.Join(dir, "1.yaml") + ":5:5 configures already in domain \"m\"",
		filepath.Join(dir, "3.yaml") + ":6:69: descriptors[1].rate_limit.replaces[0].name: found \"nobody\"; allowed: the name of a limit of domain \"m\"",
	}
	ps := config.Problems(err)
	if len(ps) != len(want) {
		t.Fatalf("problems %v, want %d", err, len(want))
	}
	for i, p := range ps {
		if !strings.HasPrefix(p.Error(), want[i]) {
			t.Errorf("problem %d: %v, want it to start %q", i, p, want[i])
		}
	}
}

// TestLoadDirRefusesAHugeFile: a file of more than yamlnode.MaxFileSize
// bytes is refused, naming it, before it is parsed.
func TestLoadDirRefusesAHugeFile(t *testing.T) {
	dir := t.TempDir()
	src := "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n# " + strings.Repeat("x", 4<<20) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := envoy.LoadDir(dir, false)
	if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(fmt.Sprint(err), "a.yaml: found more than 4194304 bytes") {
		t.Errorf("LoadDir: %v, want a configuration error naming the file and the size", err)
	}
}
