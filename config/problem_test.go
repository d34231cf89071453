package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config"
)

// TestProblemsAreValues: the problems of a file are reachable as
// *config.Problem, with errors.As for the first and config.Problems for
// every one, each field as its line of Error() shows it.
func TestProblemsAreValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.yaml")
	data := "rules:\n  - name: a\n    key: ipp\n    gcra: 10/s\nstacks:\n  - name: api\n    rules: [a, b]\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := config.Check(path)
	if err == nil {
		t.Fatal("no error")
	}
	var first *config.Problem
	if !errors.As(err, &first) {
		t.Fatalf("%v: no *config.Problem", err)
	}
	want := []config.Problem{
		{File: path, Line: 3, Column: 10, Field: "rules[0].key", Message: `found "ipp"; allowed: "ip", "route", "method", or a mapping of one of header, metadata, descriptor, constant, form, func, join (e.g. {header: X-API-Key})`},
		{File: path, Line: 7, Column: 16, Field: "stacks[0].rules[1]", Message: `found "b"; allowed: a rule of this file (a)`},
	}
	if !reflect.DeepEqual(*first, want[0]) {
		t.Errorf("errors.As: got %+v, want %+v", *first, want[0])
	}
	problems := config.Problems(err)
	if len(problems) != len(want) {
		t.Fatalf("Problems: got %d, want %d: %v", len(problems), len(want), err)
	}
	lines := strings.Split(err.Error(), "\n")
	for i, p := range problems {
		if !reflect.DeepEqual(*p, want[i]) {
			t.Errorf("problem %d: got %+v, want %+v", i, *p, want[i])
		}
		if p.Error() != lines[i] {
			t.Errorf("problem %d: Error() %q, the joined error's line %q", i, p.Error(), lines[i])
		}
		if !errors.Is(p, ratelimit.ErrConfig) {
			t.Errorf("problem %d does not wrap ErrConfig", i)
		}
	}
	if got := config.Problems(errors.New("other")); got != nil {
		t.Errorf("Problems of an error with none: %v", got)
	}
}
