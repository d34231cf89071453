// Command ratelimit-check validates rules files (see docs/config.md) and
// prints their rules and stacks as understood, for a CI pipeline or a
// reviewer. Every problem of a file is printed, each with the file, line
// and column, the field, what was found and what is allowed; the exit
// status is 1 when a file has any.
//
//	go run github.com/seed-bff0c9e1/ratelimit/cmd/ratelimit-check [-funcs user,tenant] ratelimit.yaml...
//
// -funcs lists the key functions the program registers with
// config.WithKeyFunc: a rule naming another one is a problem.
package main

import (
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
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: ratelimit-check [-funcs name,...] FILE...")
		return 2
	}
	var names []string
	if *funcs != "" {
		names = strings.Split(*funcs, ",")
	}
	status := 0
	for _, path := range flags.Args() {
		out, err := config.Check(path, names...)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: ok\n%s", path, out)
	}
	return status
}
