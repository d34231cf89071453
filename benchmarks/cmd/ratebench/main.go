// Command ratebench measures Redis-backed rate limiters against each other
// and against raw Redis in one run.
//
// It starts its own redis-server on a free loopback port (or uses
// REDIS_URL), runs every contender for a fixed time with G goroutines over K
// keys, several rounds with the order rotated, and prints the median
// ops/s, p50 and p99 latency of each, as ratios to a raw go-redis EVALSHA of
// a one-line INCR script measured in the same run. Modes:
//
//	allow   limits too high to deny (1,000,000 per second per key)
//	deny    10 per second over 100 keys: about 97% denied
//	hot     every goroutine on one key, 1000 per hour: checks that nobody
//	        admits more than the limit
//
// Then Redis memory per key (INFO memory over -memkeys keys), an HTTP
// mode (a trivial handler with no limiter, with this library's middleware
// and with a redis_rate middleware, driven over loopback), a gRPC mode (a
// unary echo service with no limiter, behind grpclimit's interceptor and
// behind go-grpc-middleware's ratelimit interceptor on redis_rate, plain
// and on an AutoPipeliner), a cluster mode
// (three masters of its own: our limiter and redis_rate on a
// ClusterClient) and the per-decision Go benchmarks (one goroutine: the
// time and allocations of one decision, or one request, on the client).
//
// With -procs, last, the process mode: the servers of the gRPC and HTTP
// modes each in a process of its own (ratebench -serve ID, which prints
// the address it listens on and serves until its stdin closes), on this
// run's redis-server (FLUSHALL before each), the load generator in this
// process (gRPC: 64 goroutines over 4 connections), the order rotated
// each round. It adds to the HTTP and gRPC modes' figures the server
// process's CPU µs per call (/proc/PID/stat's utime and stime over the
// measured interval, after a warm-up of a fifth of -d: Linux only), and
// prints ours against each peer beside the target of that comparison.
// Every process ratebench starts is killed when it ends, fails or is
// interrupted. With RATEBENCH_PROFILE_DIR set, each server process writes
// its CPU profile there, as ID.prof (the last round's).
//
//	go run ./cmd/ratebench                      # from benchmarks/
//	go run ./cmd/ratebench -d 300ms -rounds 1   # a short run
//
//	# the process mode alone, as measured on a quiet machine:
//	go run ./cmd/ratebench -procs -modes "" -memkeys 0 -http=false -grpc=false \
//		-single=false -cluster=false -serial=false -d 5s -rounds 5
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/redisproc"
)

func main() {
	d := flag.Duration("d", time.Second, "time per contender per round")
	rounds := flag.Int("rounds", 3, "rounds, contender order rotated each round")
	goroutines := flag.Int("g", 64, "goroutines")
	keys := flag.Int("k", 10_000, "keys in allow mode")
	modes := flag.String("modes", "allow,deny,hot", "modes to run")
	only := flag.String("only", "", "run only contenders whose name contains one of these |-separated words (=name: exactly this one)")
	memKeys := flag.Int("memkeys", 100_000, "keys for the memory-per-key measurement (0: skip)")
	httpMode := flag.Bool("http", true, "run the HTTP mode")
	grpcMode := flag.Bool("grpc", true, "run the gRPC mode")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	ctxTimeouts := flag.Bool("ctxtimeouts", false, "set go-redis ContextTimeoutEnabled on the shared client")
	single := flag.Bool("single", true, "measure latency with one client in a loop")
	cluster := flag.Bool("cluster", true, "run the cluster mode on three redis-server masters of its own")
	serial := flag.Bool("serial", true, "run the per-decision Go benchmarks (one goroutine: ns/op, allocs/op)")
	procs := flag.Bool("procs", false, "run the gRPC and HTTP servers each in a process of its own and report their CPU per call")
	serveID := flag.String("serve", "", "serve one server of the gRPC or HTTP mode (by its id, as -procs starts it) on REDIS_URL's Redis, print its address and run until stdin closes")
	listen := flag.String("listen", "127.0.0.1:0", "the address -serve listens on")
	flag.Parse()
	if *serveID != "" {
		if err := serve(*serveID, *listen, *goroutines, *ctxTimeouts); err != nil {
			log.Fatalf("ratebench -serve %s: %v", *serveID, err)
		}
		return
	}
	go func() {
		// An interrupted run stops what it started, as a failed one does.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		fatal(<-sig)
	}()
	for _, m := range strings.Split(*modes, ",") {
		if _, _, ok := modeQuota(m, *keys); !ok && m != "" {
			log.Fatalf("unknown mode %q (modes: allow, deny, hot)", m)
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	addr, err := redisURLAddr()
	if err != nil {
		log.Fatal(err)
	}
	if addr == "" {
		a, stop, err := redisproc.Start()
		if err != nil {
			log.Fatal(err)
		}
		defer atExit(stop)()
		addr = a
	}
	e, err := newEnv(addr, *goroutines, *ctxTimeouts)
	if err != nil {
		fatal(err)
	}
	defer e.close()
	rdb := e.rdb

	var list []contender
	for _, c := range contenders() {
		if chosen(c.name, *only) || c.name == "raw EVALSHA (INCR)" {
			list = append(list, c)
		}
	}
	fmt.Printf("ratebench %s: %s/%s, %d CPUs, %d goroutines, %v per contender, %d rounds\n",
		time.Now().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), *goroutines, *d, *rounds)

	for _, mode := range strings.Split(*modes, ",") {
		q, nkeys, ok := modeQuota(mode, *keys)
		if !ok {
			continue // "": no mode (checked at start)
		}
		results := make([][]stats, len(list))
		for r := range *rounds {
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				fatal(err)
			}
			for i := range list {
				c := list[(i+r)%len(list)]
				decide, err := c.build(e, q)
				if err != nil {
					fatalf("%s: %v", c.name, err)
				}
				// Keys of their own per contender and round: peers with a
				// fixed key prefix (redis_rate's "rate:") must not share state.
				j := (i + r) % len(list)
				ks := keyNames(fmt.Sprintf("%s:r%d:c%d:", mode, r, j), nkeys)
				if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
					fatal(err)
				}
				s := measure(decide, *goroutines, ks, *d)
				if s.decisions > 0 {
					s.redisUS = redisproc.ScriptUsec(context.Background(), rdb) / float64(s.decisions)
				}
				results[j] = append(results[j], s)
			}
		}
		printTable(mode, q, list, results, *d)
		targets.record(mode, list, results)
	}
	if *memKeys > 0 {
		memoryPerKey(e, list, *memKeys)
	}
	if *httpMode {
		targets.http, targets.httpBest = httpBench(e, *goroutines, *keys, *d, *rounds)
	}
	if *grpcMode {
		targets.grpc = grpcBench(e, *goroutines, *keys, *d, *rounds)
	}
	if *single {
		targets.single = singleClient(e, list, *d, *rounds)
	}
	if *cluster {
		targets.cluster = clusterBench(*goroutines, *keys, *d, *rounds, *only)
	}
	if *serial {
		targets.serial = perDecisionBench(e)
	}
	if *procs {
		procsBench(e, addr, *goroutines, *keys, *d, *rounds, *ctxTimeouts)
	}
	targets.print()
}

// redisURLAddr is the address of REDIS_URL, "" when it is not set.
func redisURLAddr() (string, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		return "", nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return "", err
	}
	return opt.Addr, nil
}

// modeQuota returns the limit and the number of keys of a mode, false for
// an unknown mode.
func modeQuota(mode string, keys int) (quota, int, bool) {
	switch mode {
	case "allow":
		return quota{limit: 1_000_000, period: time.Second}, keys, true
	case "deny":
		return quota{limit: 10, period: time.Second}, 100, true
	case "hot":
		return quota{limit: 1000, period: time.Hour}, 1, true
	}
	return quota{}, 0, false
}

// exits are what ratebench undoes before it exits: stopping the
// processes it started. fatal and fatalf run them first: log.Fatal skips
// deferred calls and would leave them running.
var exits struct {
	sync.Mutex
	next int
	fs   map[int]func()
}

// atExit registers f, to run once: on a fatal error, or when the function
// it returns is called.
func atExit(f func()) func() {
	exits.Lock()
	defer exits.Unlock()
	if exits.fs == nil {
		exits.fs = map[int]func(){}
	}
	id := exits.next
	exits.next++
	exits.fs[id] = f
	return func() {
		exits.Lock()
		f, ok := exits.fs[id]
		delete(exits.fs, id)
		exits.Unlock()
		if ok {
			f()
		}
	}
}

// runExits runs every function atExit registered and has not run yet,
// the last registered first (a server before the Redis it runs on).
func runExits() {
	exits.Lock()
	fs := exits.fs
	exits.fs = nil
	exits.Unlock()
	for _, id := range slices.Backward(slices.Sorted(maps.Keys(fs))) {
		fs[id]()
	}
}

func fatal(v ...any) {
	runExits()
	log.Fatal(v...)
}

func fatalf(format string, v ...any) {
	runExits()
	log.Fatalf(format, v...)
}

func printTable(mode string, q quota, list []contender, results [][]stats, d time.Duration) {
	base := median(results[0])
	fmt.Printf("\n## mode %s (%d per %v)\n\n", mode, q.limit, q.period)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "contender\tops/s\tx raw\terrors\tp50\tx raw\tp99\tx raw\tRedis µs/decision\t"
	if mode == "hot" {
		head += "admitted, worst round\t"
	}
	fmt.Fprintln(w, head)
	for i, c := range list {
		m := median(results[i])
		cost := "-"
		if m.redisUS > 0 {
			cost = fmt.Sprintf("%.2f", m.redisUS)
		}
		row := fmt.Sprintf("%s\t%.0f\t%.2f\t%d\t%v\t%.2f\t%v\t%.2f\t%s\t", c.name, m.ops, m.ops/base.ops, m.err,
			m.p50.Round(time.Microsecond), float64(m.p50)/float64(base.p50), m.p99.Round(time.Microsecond), float64(m.p99)/float64(base.p99), cost)
		if mode == "hot" && c.name != "raw EVALSHA (INCR)" {
			// GCRA-style contenders also refill 1000/hour during the run.
			row += fmt.Sprintf("%d (limit %d)\t", m.admitted, q.limit+int(d.Hours()*float64(q.limit))+1)
		} else if mode == "hot" {
			row += "-\t"
		}
		fmt.Fprintln(w, row)
	}
	w.Flush()
}

// memoryPerKey decides once for each of n keys per Redis contender and
// reports used_memory growth per key created.
func memoryPerKey(e *env, list []contender, n int) {
	fmt.Printf("\n## Redis memory per key (%d keys, INFO memory)\n\n", n)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "contender\tkeys\tbytes/key\t")
	ctx := context.Background()
	for _, c := range list {
		if !c.redis || strings.Contains(c.name, "autopipelined") || strings.Contains(c.name, "no deny cache") {
			continue
		}
		if err := e.rdb.FlushAll(ctx).Err(); err != nil {
			fatal(err)
		}
		before, _ := redisproc.UsedMemory(ctx, e.rdb)
		decide, err := c.build(e, quota{limit: 1000, period: time.Hour})
		if err != nil {
			fatal(err)
		}
		measureN(decide, 32, keyNames("mem:", n))
		after, _ := redisproc.UsedMemory(ctx, e.rdb)
		keys := e.rdb.DBSize(ctx).Val()
		fmt.Fprintf(w, "%s\t%d\t%.0f\t\n", c.name, keys, float64(after-before)/float64(max(1, keys)))
	}
	w.Flush()
}

// measureN decides once per key from goroutines.
func measureN(decide decideFunc, goroutines int, keys []string) {
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := g; i < len(keys); i += goroutines {
				if _, err := decide(context.Background(), keys[i]); err != nil {
					fatal(err)
				}
			}
		}()
	}
	for range goroutines {
		<-done
	}
}

// chosen reports whether -only picks the contender named name: every one
// for "", else those that one of its |-separated words picks: "=name"
// the one named exactly, any other word those containing it.
func chosen(name, only string) bool {
	if only == "" {
		return true
	}
	for _, w := range strings.Split(only, "|") {
		if exact, ok := strings.CutPrefix(w, "="); ok && name == exact || !ok && strings.Contains(name, w) {
			return true
		}
	}
	return false
}
