package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// notes prints, below the table, what its figures do not show: the
// errors of each phase by gRPC code, with the first message of each, and the Redis commands of each
// decision, every one of them (the commands a script runs are counted
// too, inside their script).
func notes(w io.Writer, s settings, results ...result) {
	phases := append(loadPhases(s), loadPhase{"hot key", func(r result) load { return r.hot.load }})
	fmt.Fprintln(w, "\nErrors by gRPC code:")
	none := true
	for _, r := range results {
		for _, p := range phases {
			if l := p.get(r); l.errs > 0 {
				none = false
				fmt.Fprintf(w, "- %s, %s: %s\n", r.name, p.label, perName(l.errCodes, func(n int64) string { return strconv.FormatInt(n, 10) }))
				for _, code := range slices.Sorted(maps.Keys(l.errFirst)) {
					fmt.Fprintf(w, "  - the first %s: %q\n", code, l.errFirst[code])
				}
			}
		}
	}
	if none {
		fmt.Fprintln(w, "- none")
	}
	fmt.Fprintln(w, "\nRedis commands per decision (INFO commandstats; those scripts ran too):")
	for _, r := range results {
		for _, p := range phases[:len(phases)-1] {
			fmt.Fprintf(w, "- %s, %s: %s\n", r.name, p.label, perName(p.get(r).cost.perCommand, func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }))
		}
	}
}

// perName is "name value" for each of m's names, in order.
func perName[V any](m map[string]V, format func(V) string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+format(m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
