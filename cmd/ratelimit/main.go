// Command ratelimit checks rules files (see docs/config.md) and lets an
// operator see and change what the rules of a file keep for a client in
// Redis, by the rule's name and the identity the operator knows: the API
// key as the client sends it (a header key is hashed as the service hashes
// it), the client's address (masked to the file's prefix, an IPv6 address
// naming its /64), a user. Nothing is restated: the file is loaded as the
// service loads it.
//
//	ratelimit check [-funcs user,tenant] [-json] ratelimit.yaml...
//	ratelimit status -config FILE -redis URL [-plan NAME] RULE IDENTITY
//	ratelimit reset -config FILE -redis URL RULE IDENTITY
//	ratelimit block -config FILE -redis URL -for DURATION RULE IDENTITY
//	ratelimit unblock -config FILE -redis URL RULE IDENTITY
//
// check prints every problem of a file, each with the file, line and
// column, the field, what was found and what is allowed, and exits 1 when
// a file has any; otherwise it prints the rules and stacks as understood,
// for a CI pipeline or a reviewer. -funcs lists the key functions the
// program registers with config.WithKeyFunc: a rule naming another one is
// a problem. -json prints, instead, the problems of every file to stdout
// as one JSON array of config.Problem (file, line, column, field,
// message), [] when there are none: a file that cannot be read is one
// problem with line and column 0. A file whose document has a top-level
// domain key is read in the reference Envoy rate limit server's format
// (envoyproxy/ratelimit; see docs/envoy.md), every problem at its
// file:line:column too, and prints its limits as the reference's
// /rlconfig does and the limiter rules they are; -funcs has no bearing
// on it.
//
// status prints a client's use of a rule ("per-key: 8 of 20 used, 12
// left, full again in 41s"), consuming nothing; with -plan, against that
// plan of the rule. reset forgets the client's state under the rule and
// all its plans, and its block; block refuses the client for a while
// (the rule must be blockable, or have a penalty); unblock lifts a block.
// -redis is a redis:// or rediss:// URL: with -redis-type single (the
// default) one server's; with cluster, a node's, more nodes added as
// &addr=HOST:PORT; with sentinel, a sentinel's, more added as &addr=, the
// master named by ?master_name=NAME. A call that gets no answer within
// -timeout fails. The exit status is 1
// when the rule is unknown, the identity cannot be read, there was
// nothing to reset or unblock, or Redis failed, with the cause on stderr;
// 2 for a usage error.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage lists the subcommands.
const usage = `usage:
  ratelimit check [-funcs name,...] [-json] FILE...
  ratelimit status -config FILE -redis URL [-plan NAME] RULE IDENTITY
  ratelimit reset -config FILE -redis URL RULE IDENTITY
  ratelimit block -config FILE -redis URL -for DURATION RULE IDENTITY
  ratelimit unblock -config FILE -redis URL RULE IDENTITY
Run "ratelimit COMMAND -h" for a command's flags.
`

// run runs the subcommand args name, printing its output to stdout and
// its errors to stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdout, stderr)
	case "status", "reset", "block", "unblock":
		return operate(args[0], args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "ratelimit: unknown command %q\n%s", args[0], usage)
	return 2
}
