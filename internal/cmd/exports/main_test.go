package main

import (
	"slices"
	"testing"
)

// maxExported is the budget of exported names the library keeps to: the
// count of the release that gave the Redis store its own package, which
// had to fit its options and the Store contract in the count before it.
const maxExported = 125

func TestExportedNames(t *testing.T) {
	names, err := exported("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) > maxExported {
		t.Errorf("%d exported names, the budget is %d:\n%v", len(names), maxExported, names)
	}
	for _, want := range []string{"limiter Limiter.Decide", "middleware LimitByIP", ". ErrConfig", "algorithms GCRA"} {
		if !slices.Contains(names, want) {
			t.Errorf("%q not counted", want)
		}
	}
	for _, name := range names {
		if name == "internal/script Encode" || name == "middleware deny" || name == "internal/transport Coalescer" {
			t.Errorf("%q counted", name)
		}
	}
}
