package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/go-chi/httprate"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// The per-decision mode: Go benchmarks (testing.Benchmark, one goroutine)
// of one decision or one request at a time, for the time and allocations
// of each on the client: our limiter over the memstore against the
// in-process peers, a stack of 3 rules against one, the middleware over
// the memstore against httprate keyed by client IP and against no limiter, and
// limiter.Allow over this run's redis-server (go-redis included).

// perDecision is one benchmark's result.
type perDecision struct {
	ns, allocs float64
}

func perDecisionOf(r testing.BenchmarkResult) perDecision {
	return perDecision{ns: float64(r.NsPerOp()), allocs: float64(r.AllocsPerOp())}
}

// allowBench decides for 10,000 keys in turn, one goroutine.
func allowBench(decide decideFunc) func(b *testing.B) {
	keys := keyNames("serial:", 10_000)
	return func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			if ok, err := decide(ctx, keys[i%len(keys)]); err != nil || !ok {
				b.Fatal("denied or failed:", err)
			}
		}
	}
}

// requestBench serves requests from 1024 client addresses through h.
func requestBench(h http.Handler) func(b *testing.B) {
	reqs := make([]*http.Request, 1024)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/", nil)
		reqs[i].RemoteAddr = "10.1." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256) + ":1"
	}
	return func(b *testing.B) {
		w := &discard{header: http.Header{}}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			clear(w.header)
			w.status = 0
			h.ServeHTTP(w, reqs[i%len(reqs)])
			if w.status != http.StatusOK {
				b.Fatal("status", w.status)
			}
		}
	}
}

// remoteIP is the client's address without its port, as httprate's
// deprecated LimitByIP keyed it.
func remoteIP(r *http.Request) (string, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	return host, err
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	return len(p), nil
}
func (d *discard) WriteHeader(status int) { d.status = status }

// perDecisionBench runs the per-decision benchmarks and prints them.
func perDecisionBench(e *env) map[string]perDecision {
	q := quota{limit: 1_000_000, period: time.Second}
	must := func(f decideFunc, err error) decideFunc {
		if err != nil {
			fatal(err)
		}
		return f
	}
	oneRule := must(memGCRA(e, q))
	stack, err := limiter.New(memstore.Must(), []limiter.Rule{
		{Name: "per-ip", Algorithm: gcra(q)},
		{Name: "per-user", Algorithm: algorithms.TokenBucket{Capacity: q.limit, Rate: q.limit, Period: q.period}},
		{Name: "per-route", Algorithm: algorithms.FixedWindow{Limit: q.limit, Window: q.period}},
	})
	if err != nil {
		fatal(err)
	}
	stackOf3 := func(ctx context.Context, key string) (bool, error) {
		d, err := stack.Decide(ctx, limiter.Check{Rule: "per-ip", Identity: key, Cost: 1},
			limiter.Check{Rule: "per-user", Identity: key, Cost: 1}, limiter.Check{Rule: "per-route", Identity: key, Cost: 1})
		return d.Allowed, err
	}
	rules := []middleware.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: gcra(q)}, Identity: keyfunc.IP()}}
	lim, err := limiter.New(memstore.Must(), guard.Limits(rules))
	if err != nil {
		fatal(err)
	}
	ours, err := middleware.NewWithLimiter(lim, rules)
	if err != nil {
		fatal(err)
	}
	store, err := redisstore.New(e.rdb)
	if err != nil {
		fatal(err)
	}
	overRedis := must(allowFunc(limiter.New(store, []limiter.Rule{{Name: "r", Algorithm: gcra(q)}}, limiter.WithPrefix("serial"))))

	benches := []struct {
		name string
		f    func(b *testing.B)
	}{
		{"ours memstore (gcra)", allowBench(oneRule)},
		{"go-limiter memorystore", allowBench(must(goLimiterMemory(e, q)))},
		{"x/time/rate per key", allowBench(must(xTimeRatePerKey(e, q)))},
		{"ours memstore, stack of 3", allowBench(stackOf3)},
		{"middleware over the memstore", requestBench(ours(okHandler))},
		{"httprate LimitBy (client IP)", requestBench(httprate.LimitBy(q.limit, q.period, remoteIP)(okHandler))},
		{"no limiter", requestBench(okHandler)},
		{"ours gcra over redis-server", allowBench(overRedis)},
	}
	out := map[string]perDecision{}
	fmt.Printf("\n## per decision, one goroutine (testing.Benchmark)\n\n")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "benchmark\tns/op\tallocs/op\t")
	for _, bench := range benches {
		r := perDecisionOf(testing.Benchmark(bench.f))
		out[bench.name] = r
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t\n", bench.name, r.ns, r.allocs)
	}
	w.Flush()
	return out
}
