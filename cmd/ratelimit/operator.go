package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/duration"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// operation is an operator's subcommand (status, reset, block, unblock)
// as its flags and arguments name it.
type operation struct {
	cmd                    string
	config, redisURL, plan string
	redisType              string // single, cluster or sentinel
	prefix                 string
	funcs                  []string
	block, timeout         time.Duration
	rule, identity         string
}

// operate runs the operator's subcommand cmd with args, printing its
// outcome to stdout and its failure to stderr, and returns the exit
// status.
func operate(cmd string, args []string, stdout, stderr io.Writer) int {
	op := operation{cmd: cmd}
	flags := flag.NewFlagSet("ratelimit "+cmd, flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&op.config, "config", "", "the rules file the service loads (required)")
	flags.StringVar(&op.redisURL, "redis", "", "the service's Redis: a redis:// or rediss:// URL, as -redis-type reads it (required)")
	flags.StringVar(&op.redisType, "redis-type", "single", "single (the URL names the server), cluster (a node, more with &addr=HOST:PORT) or sentinel (a sentinel, more with &addr=, and ?master_name=NAME)")
	flags.StringVar(&op.prefix, "prefix", "", "the key prefix the service gives limiter.WithPrefix, when the file sets none")
	flags.DurationVar(&op.timeout, "timeout", 3*time.Second, "how long to wait for Redis before failing")
	funcs := funcsFlag(flags)
	operands := "RULE IDENTITY"
	switch cmd {
	case "status":
		flags.StringVar(&op.plan, "plan", "", "report against this plan of the rule (a value of its plans)")
		operands = "[-plan NAME] " + operands
	case "block":
		flags.Func("for", "how long the block lasts, e.g. 1h or 7d, as in a rules file (required)", func(s string) (err error) {
			op.block, err = duration.Parse(s)
			return err
		})
		operands = "-for DURATION " + operands
	}
	flags.Usage = func() {
		fmt.Fprintf(stderr, "usage: ratelimit %s -config FILE -redis URL %s\n", cmd, operands)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if problem := op.missing(flags, flags.Args()); problem != "" {
		fmt.Fprintf(stderr, "ratelimit %s: %s\n", cmd, problem)
		flags.Usage()
		return 2
	}
	op.funcs = funcNames(*funcs)
	out, err := op.do()
	if err != nil {
		fmt.Fprintf(stderr, "ratelimit %s: %v\n", cmd, err)
		return 1
	}
	fmt.Fprintln(stdout, out)
	return 0
}

// missing says what the command lacks, "" when nothing: it takes the
// rule and the identity from args, the operands left after flags.
func (op *operation) missing(flags *flag.FlagSet, args []string) string {
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && flags.Lookup(name) != nil {
			return fmt.Sprintf("flag %q after RULE IDENTITY: flags go first", a)
		}
	}
	switch {
	case op.config == "":
		return "-config is required"
	case op.redisURL == "":
		return "-redis is required"
	case !slices.Contains([]string{"single", "cluster", "sentinel"}, op.redisType):
		return fmt.Sprintf("-redis-type %q; allowed: single, cluster, sentinel", op.redisType)
	case op.cmd == "block" && op.block <= 0:
		return "-for is required, a positive duration"
	case op.timeout <= 0:
		return "-timeout must be positive"
	case len(args) == 0:
		return "missing RULE and IDENTITY"
	case len(args) == 1:
		return "missing IDENTITY"
	case len(args) > 2:
		return fmt.Sprintf("found %d arguments after the flags; want RULE IDENTITY (flags go first)", len(args))
	case args[1] == "":
		return "empty IDENTITY"
	}
	op.rule, op.identity = args[0], args[1]
	return ""
}

// do loads the rules file on Redis as the service does and runs the
// operation, returning its outcome in words.
func (op *operation) do() (string, error) {
	redis.SetLogger(quiet{}) // a failure is reported once, with its cause, by the command
	rdb, err := op.client()
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			// Its text quotes the URL, and with it the password.
			return "", fmt.Errorf("ratelimit: -redis: the URL does not parse: %w", ue.Err)
		}
		return "", fmt.Errorf("ratelimit: -redis: %w", err)
	}
	defer rdb.Close()
	backend, err := redisstore.New(rdb, redisstore.WithTimeout(op.timeout))
	if err != nil {
		return "", err
	}
	var load []config.Option
	for _, name := range op.funcs {
		load = append(load, config.WithKeyFunc(name, noRequests))
	}
	if op.prefix != "" {
		load = append(load, config.WithLimiterOptions(limiter.WithPrefix(op.prefix)))
	}
	limits, err := config.Load(op.config, backend, load...)
	if err != nil {
		return "", err
	}
	defer limits.Close()
	// The store bounds its call by op.timeout, and a Redis that does not
	// answer fails on that, as the store's timeout; the context's
	// deadline, later, is only a backstop (a caller's own deadline is no
	// Redis failure).
	ctx, cancel := context.WithTimeout(context.Background(), 2*op.timeout)
	defer cancel()
	switch op.cmd {
	case "status":
		d, err := limits.Status(ctx, op.rule, op.identity, op.plan)
		if err != nil {
			return "", err
		}
		return describe(op.rule, op.plan, d.Results[0]), nil
	case "reset":
		return op.rule + ": reset; the client starts afresh", limits.Reset(ctx, op.rule, op.identity)
	case "block":
		return fmt.Sprintf("%s: blocked for %v", op.rule, op.block), limits.Block(ctx, op.rule, op.identity, op.block)
	}
	return op.rule + ": unblocked", limits.Unblock(ctx, op.rule, op.identity)
}

// client is the Redis client of -redis and -redis-type (a server, a
// Cluster by its nodes, or a master by its sentinels, as go-redis's
// ParseURL, ParseClusterURL and ParseFailoverURL read the URL), with one
// attempt each, bounded: an unreachable server fails within the timeout
// rather than hanging.
func (op *operation) client() (redis.UniversalClient, error) {
	t := op.timeout
	switch op.redisType {
	case "cluster":
		o, err := redis.ParseClusterURL(op.redisURL)
		if err != nil {
			return nil, err
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries, o.ContextTimeoutEnabled = t, t, t, -1, true
		return redis.NewClusterClient(o), nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(op.redisURL)
		if err != nil {
			return nil, err
		}
		if o.MasterName == "" {
			return nil, errors.New("a sentinel's URL names its master with ?master_name=NAME")
		}
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries, o.ContextTimeoutEnabled = t, t, t, -1, true
		return redis.NewFailoverClient(o), nil
	}
	o, err := redis.ParseURL(op.redisURL)
	if err != nil {
		return nil, err
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries, o.ContextTimeoutEnabled = t, t, t, -1, true
	return redis.NewClient(o), nil
}

// noRequests stands for a key function the program registers: the command
// decides no request, and reads identities as given.
func noRequests(*http.Request) (string, error) { return "", keyfunc.ErrNoKey }

// describe is a rule's status for a client in words: "per-key: 8 of 20
// used, 12 left, full again in 41s", or "per-key: blocked for 59m59s".
func describe(rule, plan string, r limiter.RuleResult) string {
	var b strings.Builder
	b.WriteString(rule)
	if plan != "" {
		fmt.Fprintf(&b, " (plan %s)", plan)
	}
	if r.Blocked { // the store reports the block, not the rule's use under it
		fmt.Fprintf(&b, ": blocked for %v", roundUp(r.RetryAfter))
		return b.String()
	}
	q := r.Policy
	unit := ""
	if q.InFlight() {
		unit = " " + q.Unit
	}
	fmt.Fprintf(&b, ": %d of %d%s used, %d left", q.Quota-r.Remaining, q.Quota, unit, r.Remaining)
	if r.Remaining == 0 && r.NextAfter > 0 {
		fmt.Fprintf(&b, ", more in %v", roundUp(r.NextAfter))
	}
	if r.ResetAfter > 0 {
		fmt.Fprintf(&b, ", full again in %v", roundUp(r.ResetAfter))
	}
	return b.String()
}

// roundUp is d rounded up to the second, or to the millisecond below a
// second: a wait is never printed shorter than it is.
func roundUp(d time.Duration) time.Duration {
	unit := time.Second
	if d < time.Second {
		unit = time.Millisecond
	}
	return (d + unit - 1).Truncate(unit)
}

// quiet is a go-redis logger that drops what go-redis would print on its
// own (a dial that failed, a sentinel's choice of master): on a terminal
// it repeated the command's own message about the same failure.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
