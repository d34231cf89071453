package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// check checks the files args name, printing what it understood to stdout
// and the problems to stderr, and returns the exit status.
func check(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("ratelimit check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	funcs := funcsFlag(flags)
	asJSON := flags.Bool("json", false, "print the problems of every file to stdout as one JSON array, and nothing else")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: ratelimit check [-funcs name,...] [-json] FILE...")
		fmt.Fprintln(stderr, "A FILE with a top-level domain key is read in the reference Envoy rate limit server's format (envoyproxy/ratelimit, docs/envoy.md); any other as a rules file (docs/config.md).")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		flags.Usage()
		return 2
	}
	status := 0
	problems := []*config.Problem{}
	for _, path := range flags.Args() {
		out, err := checkFile(path, funcNames(*funcs))
		switch {
		case err != nil && *asJSON:
			problems = append(problems, problemsOf(path, err)...)
			status = 1
		case err != nil:
			fmt.Fprintln(stderr, err)
			status = 1
		case !*asJSON:
			fmt.Fprintf(stdout, "%s: ok\n%s", path, out)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(problems); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	return status
}

// checkFile checks the file at path in its format: the reference
// server's when its document has a top-level domain key (the library's
// rules file has none), else a rules file, with the key functions funcs.
func checkFile(path string, funcs []string) (string, error) {
	data, err := yamlnode.ReadFile(path)
	if err != nil || !isReference(data) {
		return config.Check(path, funcs...)
	}
	c, err := envoy.Parse(path, data)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the reference server's format, domain %s\n%s", c.Domain, envoy.Dump(c))
	for _, r := range envoy.Limits(c) {
		fmt.Fprintf(&b, "rule %s: %v\n", r.Name, r.Algorithm)
	}
	return b.String(), nil
}

// isReference reports whether data is a mapping with a domain key.
func isReference(data []byte) bool {
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["domain"]
	return ok
}

// funcsFlag defines -funcs on flags.
func funcsFlag(flags *flag.FlagSet) *string {
	return flags.String("funcs", "", "comma-separated names of the key functions the program registers with config.WithKeyFunc")
}

// funcNames is the names -funcs lists.
func funcNames(funcs string) []string {
	if funcs == "" {
		return nil
	}
	return strings.Split(funcs, ",")
}

// problemsOf is the problems of err, Check's error for the file at path:
// one for the whole file when it has none (the file could not be read).
func problemsOf(path string, err error) []*config.Problem {
	if ps := config.Problems(err); len(ps) > 0 {
		return ps
	}
	return []*config.Problem{{File: path, Message: err.Error()}}
}
