package main

import (
	"os"
	"strings"
	"testing"
)

// The checked-in figure is what the models draw today.
func TestFigureIsCurrent(t *testing.T) {
	var b strings.Builder
	if err := render(&b); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../../docs/algorithms.svg")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Error("docs/algorithms.svg is stale: run go run ./internal/cmd/figure > docs/algorithms.svg")
	}
}

// The fixed window admits a double burst around its boundary; the sliding
// log never admits more than 5 in any second.
func TestFigureShowsTheBoundaryBurst(t *testing.T) {
	times := traffic()
	fw, sl := admitted(rows[0], times), admitted(rows[1], times)
	count := func(got []bool, from, to int) int {
		n := 0
		for i, ms := range times {
			if got[i] && ms >= from && ms < to {
				n++
			}
		}
		return n
	}
	if got := count(fw, 680, 1180); got != 10 {
		t.Errorf("fixed window admitted %d in [0.68 s, 1.18 s), want 10", got)
	}
	for from := 0; from <= 3000; from += 20 {
		if got := count(sl, from, from+1000); got > 5 {
			t.Errorf("sliding log admitted %d in [%d ms, +1 s)", got, from)
		}
	}
}
