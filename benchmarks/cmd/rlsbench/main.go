// Command rlsbench measures this project's Envoy rate limit server
// (rls/cmd/ratelimit-server) against the reference server,
// envoyproxy/ratelimit, side by side in one run.
//
// It builds both (ours from this checkout, the reference at -refversion
// from a scratch module, offline when the module cache holds it), starts
// one redis-server on a free loopback port and runs each server in turn
// as its own process against it, emptied (FLUSHALL, CONFIG RESETSTAT)
// between them, with the same configuration in the reference's format:
// three descriptors a request, a per-client-address limit (-clients
// addresses drawn on a Zipf law), one global key and 100 tenant-and-path
// pairs, with limits that admit most requests. Then, for each server:
//
//	closed  callers (-callers) each calling as soon as answered, over -conns
//	        gRPC connections, for -d each
//	open    a fixed rate (-rate) for -d, latency counted from each call's due time
//	hot     -hotcallers callers sharing 2×-hotlimit calls on one descriptor
//	        limited to -hotlimit in a fresh window: a right count admits exactly the limit
//	outage  -outagecallers callers with Envoy's 20 ms deadline; redis-server
//	        killed after -before, started again on its port after -down, the
//	        callers on for -after more; then SIGTERM, timed
//
// and prints a markdown table of both, with the ratio ours/reference. It
// fails if ours admits anything but the hot key's limit (fewer is allowed
// only with calls that failed).
// Per request: Redis CPU (INFO cpu), Redis command time (INFO
// commandstats) and the server process's CPU (/proc/PID/stat), over the
// decisions of the phase. Goroutines are counted on each server's debug
// port (/debug/pprof/goroutine), RSS read from /proc. Linux only.
//
//	go run ./cmd/rlsbench                                  # from benchmarks/: the full run
//	go run ./cmd/rlsbench -d 2s -down 2s -after 3s -before 1s   # a short one (make bench)
//
// Every process it starts is stopped when it returns, on failure or on
// SIGINT too; -timeout bounds the whole run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// settings are the flags.
type settings struct {
	d                    time.Duration
	callers              []int
	conns, rate          int
	clients              int
	skew                 float64
	hotCallers, hotLimit int
	outage               outageSettings
	refVersion           string
	ours, reference      string // prebuilt binaries, "" to build
	seed                 uint64
	timeout              time.Duration
}

// defaultRefVersion is the reference server's version measured against.
const defaultRefVersion = "v1.4.1-0.20260122083618-3fb702589d36"

func main() {
	s, err := parseFlags()
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	err = run(ctx, s, os.Stdout)
	cancel()
	stop()
	if err != nil {
		log.Fatal("rlsbench: ", err)
	}
}

func parseFlags() (settings, error) {
	var s settings
	var callers string
	flag.DurationVar(&s.d, "d", 10*time.Second, "length of each closed-loop and open-loop phase")
	flag.StringVar(&callers, "callers", "16,64", "closed-loop callers, one phase each")
	flag.IntVar(&s.conns, "conns", 4, "gRPC connections per server")
	flag.IntVar(&s.rate, "rate", 1000, "open-loop calls per second")
	flag.IntVar(&s.clients, "clients", 10_000, "client addresses")
	flag.Float64Var(&s.skew, "zipf", 1.1, "Zipf exponent of the client addresses (> 1)")
	flag.IntVar(&s.hotCallers, "hotcallers", 64, "hot-key callers")
	flag.IntVar(&s.hotLimit, "hotlimit", 1000, "hot-key limit an hour (the callers make twice as many calls)")
	flag.IntVar(&s.outage.callers, "outagecallers", 16, "outage callers")
	flag.DurationVar(&s.outage.pace, "outagepace", 5*time.Millisecond, "each outage caller calls at most once per this")
	flag.DurationVar(&s.outage.deadline, "deadline", 20*time.Millisecond, "each outage call's deadline (Envoy's default timeout)")
	flag.DurationVar(&s.outage.before, "before", 2*time.Second, "outage: load before redis-server is killed")
	flag.DurationVar(&s.outage.down, "down", 5*time.Second, "outage: how long redis-server stays down")
	flag.DurationVar(&s.outage.after, "after", 10*time.Second, "outage: load after redis-server is back")
	flag.DurationVar(&s.outage.termWait, "termwait", 15*time.Second, "how long each server's SIGTERM is waited for, before a SIGKILL")
	flag.StringVar(&s.refVersion, "refversion", defaultRefVersion, "the reference server's module version")
	flag.StringVar(&s.ours, "ours", "", "this project's server binary (default: built from this checkout)")
	flag.StringVar(&s.reference, "reference", "", "the reference server's binary (default: built at -refversion)")
	flag.Uint64Var(&s.seed, "seed", 1, "seed of the requests drawn")
	flag.DurationVar(&s.timeout, "timeout", 15*time.Minute, "bound on the whole run, builds included")
	flag.Parse()
	for _, f := range strings.Split(callers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return s, fmt.Errorf("rlsbench: -callers %q: want counts, comma-separated", callers)
		}
		s.callers = append(s.callers, n)
	}
	switch {
	case s.skew <= 1:
		return s, fmt.Errorf("rlsbench: -zipf %v: want more than 1", s.skew)
	case s.clients < 2 || s.hotLimit < 1 || s.hotCallers < 1 || s.outage.callers < 1 || s.rate < 1:
		return s, fmt.Errorf("rlsbench: -clients (2 or more), -hotlimit, -hotcallers, -outagecallers and -rate must be positive")
	}
	return s, nil
}

// runtimeSubdirectory is RUNTIME_SUBDIRECTORY: the configuration is
// RUNTIME_ROOT/ratelimit/config/rlsbench.yaml.
const runtimeSubdirectory = "ratelimit"

// benchLimits admit most requests: the hottest client addresses go over
// theirs at full speed, the rest stay under.
var benchLimits = limits{perClient: 5000, global: 1_000_000, perPath: 1_000_000}

// run builds both servers, measures each against one redis-server and
// prints the table. Every process it starts is stopped before it returns.
func run(ctx context.Context, s settings, out io.Writer) error {
	dir, err := os.MkdirTemp("", "rlsbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := []struct{ name, bin string }{{"ours", s.ours}, {"reference", s.reference}}
	if bins[0].bin == "" {
		fmt.Fprintln(out, "rlsbench: building ours from this checkout")
		if bins[0].bin, err = buildOurs(ctx, dir); err != nil {
			return err
		}
	}
	if bins[1].bin == "" {
		fmt.Fprintf(out, "rlsbench: building the reference at %s\n", s.refVersion)
		if bins[1].bin, err = buildReference(ctx, dir, s.refVersion); err != nil {
			return err
		}
	}
	l := benchLimits
	l.hot = s.hotLimit
	conf := filepath.Join(dir, "runtime", runtimeSubdirectory, "config")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(conf, "rlsbench.yaml"), []byte(configYAML(l)), 0o644); err != nil {
		return err
	}
	r, err := startRedis()
	if err != nil {
		return err
	}
	defer r.close()
	tr := newTraffic(s.clients, 10, 10, s.skew)
	fmt.Fprintf(out, "rlsbench %s: %s/%s, %d CPUs, %s; redis-server on %s; reference %s\n",
		time.Now().UTC().Format(time.DateTime), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), r.addr, s.refVersion)
	fmt.Fprintf(out, "rlsbench: %v a phase, callers %v over %d connections, open loop %d/s; %d client addresses (Zipf %v); hot key %d callers, limit %d; outage %d callers every %v, deadline %v, Redis down %v\n",
		s.d, s.callers, s.conns, s.rate, s.clients, s.skew, s.hotCallers, s.hotLimit, s.outage.callers, s.outage.pace, s.outage.deadline, s.outage.down)
	var results []result
	for _, b := range bins {
		if err := r.reset(ctx); err != nil {
			return err
		}
		res, err := benchServer(ctx, s, b.name, b.bin, dir, r, tr)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		results = append(results, res)
	}
	report(out, s, results[0], results[1])
	notes(out, s, results...)
	return hotCheck(results[0]) // ours; the reference's is in the table
}
