package main

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// stats is one contender's run.
type stats struct {
	ops       float64 // decisions per second: calls that failed (err) are not counted
	p50, p99  time.Duration
	admitted  int64   // calls admitted (from median: in the round that admitted most)
	err       int64   // calls that failed (from median: in all rounds)
	decisions int64   // decisions made (calls that did not fail)
	redisUS   float64 // Redis CPU in scripts and functions per decision, µs (0: none, or not Redis)
	cpuUS     float64 // the server process's CPU per call answered, µs (0: not measured)
}

// keyNames returns n keys of the form prefix + index.
func keyNames(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	return keys
}

// measure runs decide from goroutines for d over keys (goroutine g takes
// keys g, g+G, ... in turn) and returns throughput and latency. The
// throughput counts decisions only: a call that returns an error decided
// nothing (a store failing fast must not earn throughput) and is counted
// in err; the latencies are those of every call.
func measure(decide decideFunc, goroutines int, keys []string, d time.Duration) stats {
	ctx := context.Background()
	var admitted, errs atomic.Int64
	lat := make([][]time.Duration, goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for g := range goroutines {
		wg.Go(func() {
			own := make([]time.Duration, 0, 1<<14)
			for i := g; time.Now().Before(deadline); i += goroutines {
				t0 := time.Now()
				ok, err := decide(ctx, keys[i%len(keys)])
				own = append(own, time.Since(t0))
				switch {
				case err != nil:
					errs.Add(1)
				case ok:
					admitted.Add(1)
				}
			}
			lat[g] = own
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	decided := int64(len(all)) - errs.Load()
	s := stats{ops: float64(decided) / elapsed.Seconds(), decisions: decided, admitted: admitted.Load(), err: errs.Load()}
	if n := len(all); n > 0 {
		s.p50, s.p99 = all[n/2], all[n*99/100]
	}
	return s
}

// median takes the median of each field over rounds, but admitted, the
// largest (a limit must hold in every round), and err, the sum.
func median(runs []stats) stats {
	pick := func(f func(stats) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	var m stats
	m.ops = pick(func(s stats) float64 { return s.ops })
	m.p50 = time.Duration(pick(func(s stats) float64 { return float64(s.p50) }))
	m.p99 = time.Duration(pick(func(s stats) float64 { return float64(s.p99) }))
	m.redisUS = pick(func(s stats) float64 { return s.redisUS })
	m.cpuUS = pick(func(s stats) float64 { return s.cpuUS })
	for _, r := range runs {
		m.admitted = max(m.admitted, r.admitted)
		m.err += r.err
	}
	return m
}
