package main

import (
	"slices"
	"testing"
)

// maxExported is the budget of exported names the library keeps to: 100
// for deciding, keys, headers and stores, and room for what users deploy
// on top (operator controls, settlement, shaping), which adds methods to
// the Limiter and to every Store.
const maxExported = 130

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
		if name == "internal/script Encode" || name == "middleware deny" {
			t.Errorf("%q counted", name)
		}
	}
}
