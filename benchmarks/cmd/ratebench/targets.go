package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// summary collects what the performance targets compare, from every mode
// of one run, and prints each target with its ratio.
type summary struct {
	allow, deny, hot map[string]stats
	http, httpBest   float64 // our middleware's req/s over redis_rate's, and over the better of it plain or autopipelined
	grpc             grpcRatios
	single           map[string]stats
	cluster          map[string]stats
	clusterUsec      map[string][]float64 // Redis µs in scripts per decision, by master
	globalMaster     int                  // the master of the global key
	serial           map[string]perDecision
}

var targets summary

// record keeps a mode's medians by contender name.
func (s *summary) record(mode string, list []contender, results [][]stats) {
	m := make(map[string]stats, len(list))
	for i, c := range list {
		m[c.name] = median(results[i])
	}
	switch mode {
	case "allow":
		s.allow = m
	case "deny":
		s.deny = m
	case "hot":
		s.hot = m
	}
}

func (s *summary) print() {
	fmt.Printf("\n## Targets\n\n")
	ratio := func(m map[string]stats, a, b string) (float64, bool) {
		x, okA := m[a]
		y, okB := m[b]
		if !okA || !okB || y.ops == 0 {
			return 0, false
		}
		return x.ops / y.ops, true
	}
	line := func(name string, got float64, ok bool, want float64, atLeast bool) {
		if !ok {
			fmt.Printf("%-68s not measured (mode or contender left out)\n", name)
			return
		}
		met := got >= want
		if !atLeast {
			met = got <= want
		}
		verdict, cmp := "missed", ">="
		if met {
			verdict = "met"
		}
		if !atLeast {
			cmp = "<="
		}
		fmt.Printf("%-68s %6.2f  (want %s %.2f)  %s\n", name, got, cmp, want, verdict)
	}
	r, ok := ratio(s.allow, "ours gcra", "redis_rate (gcra)")
	line("1. one rule, allow mode: ours / redis_rate", r, ok, 1.10, true)
	line("2. HTTP, the README's middleware: ours / redis_rate middleware", s.http, s.http > 0, 1.5, true)
	line("2d. HTTP: ours / the better redis_rate middleware (plain or autopipelined)", s.httpBest, s.httpBest > 0, 1.2, true)
	line("2b. gRPC unary: ours / go-grpc-middleware ratelimit on redis_rate", s.grpc.plain, s.grpc.plain > 0, 1.3, true)
	line("2c. gRPC unary: p99 ours / go-grpc-middleware ratelimit on redis_rate", s.grpc.plainP99, s.grpc.plainP99 > 0, 1, false)
	if s.grpc.best > 0 {
		fmt.Printf("%-68s %6.2f  (p99 %.2f; no target of its own)\n", "2e. gRPC unary: ours / the better peer (plain or autopipelined)", s.grpc.best, s.grpc.bestP99)
	}
	r, ok = ratio(s.allow, "ours gcra", "redis_rate (gcra)")
	line("3a. coalesced (ours by default): ours / redis_rate direct", r, ok, 1.5, true)
	r, ok = ratio(s.allow, "ours gcra", "redis_rate, autopipelined")
	line("3b. coalesced: ours by default / redis_rate through an AutoPipeliner", r, ok, 1.15, true)
	r, ok = ratio(s.allow, "ours gcra, autopipelined", "redis_rate, autopipelined")
	line("3c. both through the same AutoPipeliner: ours / redis_rate", r, ok, 1.15, true)
	r, ok = ratio(s.allow, "ours stack of 3", "ours gcra")
	line("4. stack of 3 / one rule", r, ok, 0.8, true)
	ours, rr := s.allow["ours gcra"].redisUS, s.allow["redis_rate (gcra)"].redisUS
	line("5. Redis CPU per GCRA decision: ours / redis_rate (commandstats)", ours/rr, ours > 0 && rr > 0, 1, false)
	fmt.Printf("%-68s %6.2f µs ours (functions), %.2f µs ours (scripts), %.2f µs redis_rate\n", "", ours,
		s.allow["ours gcra, scripts"].redisUS, rr)
	r, ok = ratio(s.deny, "ours gcra", "raw EVALSHA (INCR)")
	line("6a. deny mode: ours / raw EVALSHA", r, ok, 30, true)
	if s.hot != nil {
		var over []string
		for name, m := range s.hot {
			if strings.HasPrefix(name, "ours") && m.admitted > 1001 {
				over = append(over, fmt.Sprintf("%s %d", name, m.admitted))
			}
		}
		slices.Sort(over)
		fmt.Printf("%-68s %s\n", "6b. hot key, worst round: each algorithm admits <= 1000 + refill",
			map[bool]string{true: "met", false: "missed: " + strings.Join(over, ", ")}[len(over) == 0])
	}
	for _, m := range []struct {
		name  string
		stats map[string]stats
	}{{"allow", s.allow}, {"deny", s.deny}} {
		for _, peer := range []string{"go-limiter memorystore", "x/time/rate per key"} {
			r, ok := ratio(m.stats, "ours memstore (gcra)", peer)
			line(fmt.Sprintf("8. in process, %s mode: ours memstore / %s", m.name, peer), r, ok, 1, true)
		}
	}
	r, ok = ratio(s.cluster, "ours gcra", "redis_rate (gcra)")
	line("9a. Redis Cluster, one rule: ours / redis_rate", r, ok, 1.8, true)
	if best, ok2 := ratio(s.cluster, "redis_rate, autopipelined", "redis_rate (gcra)"); ok && ok2 {
		line("9d. Redis Cluster: ours / the better redis_rate (plain or autopipelined)", r/max(1, best), true, 1.8, true)
	}
	if r, ok := ratio(s.cluster, "ours per-key + global", "ours gcra"); ok {
		fmt.Printf("%-68s %6.2f  (no target: one global key is one node's work)\n", "9b. Redis Cluster: a per-key and a global rule / the per-key rule", r)
	}
	if r, ok := ratio(s.cluster, "ours per-key + leased global", "ours gcra"); ok {
		fmt.Printf("%-68s %6.2f  (no target; see 11c)\n", "9c. Redis Cluster: the same, the global rule leased", r)
	}
	r, ok = ratio(s.allow, "ours per-key + leased global", "ours gcra")
	line("11a. one node: per-key + leased global / the per-key rule alone", r, ok, 0.95, true)
	lp, up := s.allow["ours per-key + leased global"].p99, s.allow["ours per-key + global"].p99
	line("11b. one node: p99 of per-key + global, leased / unleased", float64(lp)/float64(up), lp > 0 && up > 0, 1, false)
	if r, ok := ratio(s.allow, "ours per-key + global", "ours gcra"); ok {
		fmt.Printf("%-68s %6.2f  (unleased, for comparison)\n", "", r)
	}
	if usec := s.clusterUsec["ours per-key + leased global"]; len(usec) > s.globalMaster {
		busiest := 0.0
		for i, u := range usec {
			if i != s.globalMaster {
				busiest = max(busiest, u)
			}
		}
		line("11c. Cluster, leased: Redis µs on the global key's master / busiest other", usec[s.globalMaster]/busiest, busiest > 0, 1, false)
		fmt.Printf("%-68s µs per decision by master: leased %s, unleased %s\n", "", joined(usec), joined(s.clusterUsec["ours per-key + global"]))
	}
	s.printSerial(line)
	a, b := s.single["ours gcra"], s.single["ours gcra, one by one"]
	line("7. one client in a loop: p50 ours / ours one by one with scripts (before)", float64(a.p50)/float64(b.p50), a.p50 > 0 && b.p50 > 0, 1.05, false)
	fmt.Printf("%-68s %v ours, %v one by one with scripts, %v redis_rate\n", "", a.p50.Round(time.Microsecond), b.p50.Round(time.Microsecond),
		s.single["redis_rate (gcra)"].p50.Round(time.Microsecond))
}

// singleClient measures the allow mode with one goroutine in a loop, for
// the contenders whose latency the targets compare.
func singleClient(e *env, list []contender, d time.Duration, rounds int) map[string]stats {
	q, keys, _ := modeQuota("allow", 10_000)
	out := map[string]stats{}
	for _, c := range list {
		if c.name != "ours gcra" && c.name != "ours gcra, one by one" && c.name != "redis_rate (gcra)" {
			continue
		}
		var runs []stats
		for r := range rounds {
			decide, err := c.build(e, q)
			if err != nil {
				fatal(err)
			}
			runs = append(runs, measure(decide, 1, keyNames(fmt.Sprintf("single:%d:%s:", r, c.name), keys), d))
		}
		out[c.name] = median(runs)
	}
	fmt.Printf("\n## one client in a loop (allow mode)\n\n")
	for _, name := range []string{"ours gcra", "ours gcra, one by one", "redis_rate (gcra)"} {
		if m, ok := out[name]; ok {
			fmt.Printf("%-22s %8.0f ops/s  %d errors  p50 %v  p99 %v\n", name, m.ops, m.err, m.p50.Round(time.Microsecond), m.p99.Round(time.Microsecond))
		}
	}
	return out
}

// printSerial prints the targets of the per-decision benchmarks.
func (s *summary) printSerial(line func(name string, got float64, ok bool, want float64, atLeast bool)) {
	get := func(name string) (perDecision, bool) {
		r, ok := s.serial[name]
		return r, ok && r.ns > 0
	}
	ours, okOurs := get("ours memstore (gcra)")
	peer, okPeer := get("go-limiter memorystore")
	line("10a. in process, one goroutine: ours memstore / go-limiter, time", ours.ns/peer.ns, okOurs && okPeer, 1, false)
	if okOurs && okPeer {
		x, _ := get("x/time/rate per key")
		fmt.Printf("%-68s %.0f ns ours, %.0f ns go-limiter, %.0f ns x/time/rate\n", "", ours.ns, peer.ns, x.ns)
	}
	line("10b. in process: ours memstore, allocs per decision", ours.allocs, okOurs, 0, false)
	stack, ok := get("ours memstore, stack of 3")
	line("10c. in process: a stack of 3 rules / one rule, time", stack.ns/ours.ns, ok && okOurs, 2.5, false)
	mw, okMW := get("middleware over the memstore")
	none, okNone := get("no limiter")
	line("10d. middleware over the memstore: allocs beyond no limiter", mw.allocs-none.allocs, okMW && okNone, 2, false)
	if okMW {
		h, _ := get("httprate LimitBy (client IP)")
		fmt.Printf("%-68s %.0f ns ours, %.0f ns httprate by client IP (%.0f allocs)\n", "", mw.ns, h.ns, h.allocs)
	}
	redis, ok := get("ours gcra over redis-server")
	line("10e. limiter.Allow over Redis: allocs per decision (26 at e512455)", redis.allocs, ok, 13, false)
}
