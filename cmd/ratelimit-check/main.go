// Command ratelimit-check validates rules files (see docs/config.md) and
// prints their rules and stacks as understood, for a CI pipeline or a
// reviewer. Every problem of a file is printed, each with the file, line
// and column, the field, what was found and what is allowed; the exit
// status is 1 when a file has any.
//
//	go run github.com/seed-bff0c9e1/ratelimit/cmd/ratelimit-check [-funcs user,tenant] [-json] ratelimit.yaml...
//
// -funcs lists the key functions the program registers with
// config.WithKeyFunc: a rule naming another one is a problem.
//
// -json prints, instead, the problems of every file to stdout as one
// JSON array of config.Problem (file, line, column, field, message), []
// when there are none, for an editor or a CI annotation: a file that
// cannot be read is one problem with line and column 0.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/config"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run checks the files args name, printing what it understood to stdout
// and the problems to stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("ratelimit-check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	funcs := flags.String("funcs", "", "comma-separated names of the key functions the program registers")
	asJSON := flags.Bool("json", false, "print the problems of every file to stdout as one JSON array, and nothing else")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: ratelimit-check [-funcs name,...] [-json] FILE...")
		return 2
	}
	var names []string
	if *funcs != "" {
		names = strings.Split(*funcs, ",")
	}
	status := 0
	problems := []*config.Problem{}
	for _, path := range flags.Args() {
		out, err := config.Check(path, names...)
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

// problemsOf is the problems of err, Check's error for the file at path:
// one for the whole file when it has none (the file could not be read).
func problemsOf(path string, err error) []*config.Problem {
	if ps := config.Problems(err); len(ps) > 0 {
		return ps
	}
	return []*config.Problem{{File: path, Message: err.Error()}}
}
