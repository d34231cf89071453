package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/procstat"
	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/redisproc"
)

// The process mode (-procs): each server of the gRPC and HTTP modes runs
// in a process of its own, ratebench itself with -serve, on this run's
// redis-server, and the load generator in this process, so that the
// server's CPU per call is its own: /proc/PID/stat's utime and stime over
// the measured interval, over the calls it answered (and beside it the
// Redis CPU in scripts and functions per call, from INFO commandstats).
// Linux only.

// grpcConns is the client connections the process mode's gRPC load
// spreads its calls over.
const grpcConns = 4

// startTimeout bounds how long a server process may take to print its
// address.
const startTimeout = 10 * time.Second

// procServer is one server of the process mode: the id -serve takes and
// how to call it at its address.
type procServer struct {
	id, name string
	caller   func(addr string) (decideFunc, func())
}

// procTarget compares ours with a peer (by their ids), against target
// (the text printed; "-" for none).
type procTarget struct {
	ours, peer string
	target     string
}

// procsBench runs the gRPC and HTTP servers each in a process of its own
// on the Redis at addr (FLUSHALL before each) and prints their calls/s,
// latency and CPU per call, then ours against each peer with its target.
func procsBench(e *env, addr string, goroutines, keys int, d time.Duration, rounds int, ctxTimeouts bool) {
	var grpcList, httpList []procServer
	for _, s := range grpcServers() {
		grpcList = append(grpcList, procServer{s.id, s.name, func(addr string) (decideFunc, func()) {
			return grpcCaller(addr, grpcConns)
		}})
	}
	for _, s := range httpServers() {
		httpList = append(httpList, procServer{s.id, s.name, func(addr string) (decideFunc, func()) {
			return httpCaller("http://"+addr, goroutines)
		}})
	}
	// Every process and round takes d, a fifth of it to warm up, and at
	// most startTimeout to start; a call that hangs past that ends the run.
	budget := time.Duration(rounds*(len(grpcList)+len(httpList))) * (d + d/5 + startTimeout)
	watchdog := time.AfterFunc(budget+time.Minute, func() { fatalf("process mode: not done in %v", budget+time.Minute) })
	defer watchdog.Stop()
	run := func(list []procServer) [][]stats {
		ks := keyNames("proc:", keys)
		results := make([][]stats, len(list))
		for r := range rounds {
			for i := range list {
				j := (i + r) % len(list)
				results[j] = append(results[j], procRound(e, addr, list[j], goroutines, ks, d, ctxTimeouts))
			}
		}
		return results
	}
	report := func(title, unit string, list []procServer, results [][]stats, targets []procTarget) {
		names := make([]string, len(list))
		byID := make(map[string]int, len(list))
		for i, s := range list {
			names[i], byID[s.id] = s.name, i
		}
		printServers(title, unit, names, results)
		fmt.Printf("\nours / peer:\n\n")
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "ours\tpeer\t%s\tCPU/call\tp99\ttarget\t\n", unit)
		for _, t := range targets {
			o, p := median(results[byID[t.ours]]), median(results[byID[t.peer]])
			fmt.Fprintf(w, "%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t\n", names[byID[t.ours]], names[byID[t.peer]],
				o.ops/p.ops, o.cpuUS/p.cpuUS, float64(o.p99)/float64(p.p99), t.target)
		}
		w.Flush()
	}

	report(fmt.Sprintf("gRPC, servers in processes of their own: unary echo, %d client goroutines over %d connections", goroutines, grpcConns),
		"calls/s", grpcList, run(grpcList), []procTarget{
			{"grpc-ours", "grpc-redis_rate", "calls/s >= 1.30 or CPU/call <= 0.80"},
			{"grpc-ours", "grpc-redis_rate-ap", "calls/s >= 1.00 and CPU/call <= 1.00"},
			{"grpc-ours-nomd", "grpc-redis_rate", "calls/s >= 1.30 or CPU/call <= 0.80"},
			{"grpc-ours-nomd", "grpc-redis_rate-ap", "calls/s >= 1.00 and CPU/call <= 1.00"},
		})
	report(fmt.Sprintf("HTTP, servers in processes of their own: trivial handler, %d client goroutines", goroutines),
		"req/s", httpList, run(httpList), []procTarget{
			{"http-ours", "http-redis_rate-ap", "req/s >= 1.20 and CPU/req <= 1.00"},
			{"http-ours", "http-redis_rate", "-"},
		})
}

// procRound starts server s in a process of its own, warms it up for a
// fifth of d, then measures it for d and reads the CPU it used meanwhile.
func procRound(e *env, addr string, s procServer, goroutines int, keys []string, d time.Duration, ctxTimeouts bool) stats {
	if err := e.rdb.FlushAll(context.Background()).Err(); err != nil {
		fatal(err)
	}
	pid, serverAddr, stop, err := startServer(s.id, addr, goroutines, ctxTimeouts)
	if err != nil {
		fatalf("%s: %v", s.name, err)
	}
	defer stop()
	call, closeClient := s.caller(serverAddr)
	defer closeClient()
	measure(call, goroutines, keys, d/5) // connections, to Redis too, and the library's scripts
	if err := e.rdb.ConfigResetStat(context.Background()).Err(); err != nil {
		fatal(err)
	}
	before, err := procstat.CPU(pid)
	if err != nil {
		fatalf("%s: %v", s.name, err)
	}
	st := measure(call, goroutines, keys, d)
	after, err := procstat.CPU(pid)
	if err != nil {
		fatalf("%s: %v", s.name, err)
	}
	if st.decisions > 0 {
		st.cpuUS = float64(after-before) / float64(time.Microsecond) / float64(st.decisions)
		st.redisUS = redisproc.ScriptUsec(context.Background(), e.rdb) / float64(st.decisions)
	}
	return st
}

// startServer starts ratebench -serve id on the Redis at redisAddr and
// returns its pid, the address it listens on and a function that kills it
// (run on a fatal error too). The server exits when its stdin closes, so
// it ends with this process however that ends.
func startServer(id, redisAddr string, goroutines int, ctxTimeouts bool) (int, string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, "", nil, err
	}
	cmd := exec.Command(exe, "-serve", id, "-listen", "127.0.0.1:0",
		"-g", strconv.Itoa(goroutines), "-ctxtimeouts="+strconv.FormatBool(ctxTimeouts))
	cmd.Env = append(os.Environ(), "REDIS_URL=redis://"+redisAddr)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return 0, "", nil, err
	}
	// Closing stdin lets the server stop as it should (and write its
	// profile); one that has not exited a second later is killed.
	stop := atExit(func() {
		_ = stdin.Close()
		t := time.AfterFunc(time.Second, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		t.Stop()
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case a := <-line:
		if a == "" {
			stop()
			return 0, "", nil, errors.New("the server process exited before it listened")
		}
		return cmd.Process.Pid, a, stop, nil
	case <-time.After(startTimeout):
		stop()
		return 0, "", nil, fmt.Errorf("the server process printed no address in %v", startTimeout)
	}
}

// serve serves the server of the gRPC or HTTP mode named id on listen,
// its limiter on REDIS_URL's Redis with a pool for goroutines, prints the
// address it listens on and serves until stdin closes.
func serve(id, listen string, goroutines int, ctxTimeouts bool) error {
	addr, err := redisURLAddr()
	if err != nil {
		return err
	}
	if addr == "" {
		return errors.New("REDIS_URL is not set")
	}
	e, err := newEnv(addr, goroutines, ctxTimeouts)
	if err != nil {
		return err
	}
	defer e.close()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	defer l.Close()
	var ids []string
	for _, s := range grpcServers() {
		if s.id == id {
			opts, err := s.opts(e)
			if err != nil {
				return err
			}
			defer serveGRPC(l, opts).Stop()
		}
		ids = append(ids, s.id)
	}
	for _, s := range httpServers() {
		if s.id == id {
			h, err := s.handler(e)
			if err != nil {
				return err
			}
			go func() { _ = http.Serve(l, h) }()
		}
		ids = append(ids, s.id)
	}
	if !slices.Contains(ids, id) {
		return fmt.Errorf("no server %q (servers: %s)", id, strings.Join(ids, ", "))
	}
	if dir := os.Getenv("RATEBENCH_PROFILE_DIR"); dir != "" {
		stop, err := profileTo(filepath.Join(dir, id+".prof"))
		if err != nil {
			return err
		}
		defer stop()
	}
	fmt.Println(l.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// profileTo writes a CPU profile to path until the function it returns is
// called: a server's own (-procs with RATEBENCH_PROFILE_DIR set; each
// round's server writes over the last round's).
func profileTo(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
