package main

import (
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want []string // a substring of each problem, in order
	}{
		{"testdata/good", nil},
		{"testdata/bad", []string{
			"testdata/bad/internal/cmdline/cmdline.go: imports example.com/root/internal/testkit/harness, a test harness, outside a test",
			"testdata/bad/limiter/limiter.go: imports example.com/root/internal/testkit/harness, a test harness, outside a test",
			"testdata/bad/nested/go.mod:5: requires example.com/root at v0.0.0-00010101000000-000000000000",
			"testdata/bad/nested/nested.go: imports example.com/root/internal/secret, internal to module example.com/root",
		}},
		{"../../..", nil}, // this repository
	} {
		got, err := check(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) || !slices.EqualFunc(got, tc.want, strings.Contains) {
			t.Errorf("%s: got %q, want %q", tc.dir, got, tc.want)
		}
	}
}
