package rls_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/rlstest"
	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

const outageConfig = `
domain: edge
descriptors:
  - key: client
    rate_limit: {unit: minute, requests_per_unit: 1000000}
`

// The outage's parameters: Envoy's default deadline, the store timeout a
// production server has, and the bounds the command promises.
const (
	envoyDeadline     = 20 * time.Millisecond
	outageTimeout     = 100 * time.Millisecond // redisstore.WithTimeout
	answerBound       = envoyDeadline + outageTimeout
	recoveryBound     = 2 * time.Second
	outageCallers     = 8
	outageDown        = 1500 * time.Millisecond
	goroutineSlack    = 20  // after the load stops
	goroutineInFlight = 200 // while it runs: a few per call in flight, never one per call made
)

// call is one call of the load: when it started, how long the client
// waited, and what it got.
type call struct {
	start   time.Time
	elapsed time.Duration
	code    codes.Code
	decided bool // an answer with duration_until_reset: Redis decided
}

// TestRedisOutage kills the server's redis-server under a bounded load of
// callers with Envoy's 20 ms deadline, and starts it again: every call
// answers within its deadline (the server's handler within the deadline
// and the store's timeout), UNAVAILABLE while Redis is down (OK under
// FailOpen), the goroutine count stays bounded and comes back, and the
// server decides on Redis again within 2 s of Redis returning.
func TestRedisOutage(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		t.Run("FailOpen="+strconv.FormatBool(failOpen), func(t *testing.T) {
			outage(t, failOpen)
		})
	}
}

func outage(t *testing.T, failOpen bool) {
	srvRedis := testredis.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srvRedis.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	cfg, err := rls.Parse("outage.yaml", []byte(outageConfig))
	if err != nil {
		t.Fatal(err)
	}
	st, err := redisstore.New(rdb, redisstore.WithTimeout(outageTimeout))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(st, rls.Limits(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	var failures atomic.Int64
	srv, err := rls.NewServer(lim, []*rls.Config{cfg}, rls.Options{FailOpen: failOpen, OnError: func(error) { failures.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	var slowest atomic.Int64 // the longest a handler ran, in ns
	client := dialTimed(t, srv, &slowest)

	ask := func(ctx context.Context, id string) call {
		c := call{start: time.Now()}
		res, err := client.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("client", id)}})
		c.elapsed = time.Since(c.start)
		c.code = status.Code(err)
		if err == nil {
			if res.OverallCode != rlsv3.RateLimitResponse_OK {
				c.code = codes.ResourceExhausted // never expected here
			}
			c.decided = len(res.Statuses) == 1 && res.Statuses[0].DurationUntilReset != nil
		}
		return c
	}
	// decidedWithin polls with a generous deadline until Redis decides.
	decidedWithin := func(limit time.Duration) (time.Duration, bool) {
		from := time.Now()
		for time.Since(from) < limit {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			c := ask(ctx, "probe")
			cancel()
			if c.code == codes.OK && c.decided {
				return time.Since(from), true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(from), false
	}
	if _, ok := decidedWithin(10 * time.Second); !ok {
		t.Fatal("the server never decided on Redis before the outage")
	}
	runtime.GC()
	before, rssBefore := runtime.NumGoroutine(), rss()

	// The load: 8 callers, each call with Envoy's deadline, until stop.
	stop := make(chan struct{})
	calls := make([][]call, outageCallers)
	var wg sync.WaitGroup
	for i := range outageCallers {
		wg.Go(func() {
			id := "c" + strconv.Itoa(i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), envoyDeadline)
				calls[i] = append(calls[i], ask(ctx, id))
				cancel()
			}
		})
	}
	var peak atomic.Int64
	var rssPeak atomic.Int64
	var lag atomic.Int64 // the latest a 10 ms tick was seen, in ns: the process's own scheduling delay
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			if l := int64(time.Since(last) - 10*time.Millisecond); l > lag.Load() {
				lag.Store(l)
			}
			last = time.Now()
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			if r := rss(); r > rssPeak.Load() {
				rssPeak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	time.Sleep(300 * time.Millisecond)
	srvRedis.Stop(t)
	down := time.Now()
	time.Sleep(outageDown)
	duringDown := runtime.NumGoroutine()
	srvRedis.Restart(t)
	up := time.Now()
	recovered, ok := decidedWithin(10 * time.Second)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	<-sampled
	ended := time.Now()

	// The goroutines of the calls end once the load does.
	var after int
	for {
		runtime.GC()
		after = runtime.NumGoroutine()
		if after <= before+goroutineSlack || time.Since(ended) > 10*time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	settled := time.Since(ended)

	// Sort the calls: decided before the kill, made while Redis was
	// down (started after the kill, ended before the restart), after.
	// A call cannot answer sooner than the process runs: on a machine
	// busy with other work, the bound is the plus the scheduling
	// delay measured meanwhile (logged).
	bound := answerBound + time.Duration(lag.Load())
	var total, downCalls, policy, deadlines, decidedUp, slow int
	var longest time.Duration
	for _, cs := range calls {
		for _, c := range cs {
			total++
			longest = max(longest, c.elapsed)
			if c.elapsed > bound {
				slow++
				if slow <= 5 {
					t.Errorf("a call took %v (code %v, started %v after the kill, %v after the restart), more than its deadline and the store's timeout (%v) and the scheduling delay (%v)", c.elapsed, c.code, c.start.Sub(down), c.start.Sub(up), answerBound, time.Duration(lag.Load()))
				}
			}
			if c.start.After(down) && c.start.Add(c.elapsed).Before(up) {
				downCalls++
				switch {
				case c.code == codes.DeadlineExceeded:
					deadlines++
				case !failOpen && c.code == codes.Unavailable, failOpen && c.code == codes.OK && !c.decided:
					policy++
				default:
					t.Errorf("while Redis was down, a call got %v (decided %v); want %s", c.code, c.decided, map[bool]string{false: "UNAVAILABLE", true: "OK, undecided"}[failOpen])
				}
				continue
			}
			if c.code == codes.OK && c.decided {
				decidedUp++
			}
		}
	}
	t.Logf("FailOpen=%v: %d calls by %d callers (deadline %v, store timeout %v); %d while Redis was down for %v: %d answered by the failure policy, %d reached their deadline; %d decided by Redis; slowest call %v, slowest handler %v, scheduling delay up to %v; %d failures reported",
		failOpen, total, outageCallers, envoyDeadline, outageTimeout, downCalls, up.Sub(down).Round(time.Millisecond), policy, deadlines, decidedUp, longest.Round(time.Microsecond), time.Duration(slowest.Load()).Round(time.Microsecond), time.Duration(lag.Load()).Round(time.Microsecond), failures.Load())
	t.Logf("goroutines: %d before, %d peak under load, %d at the end of the outage, %d after (%v after the load stopped); RSS: %d KiB before, %d KiB peak, %d KiB after; decided on Redis again %v after it returned",
		before, peak.Load(), duringDown, after, settled.Round(time.Millisecond), rssBefore, rssPeak.Load(), rss(), recovered.Round(time.Millisecond))

	if !ok {
		t.Fatalf("the server did not decide on Redis again within 10 s of its return")
	}
	if recovered > recoveryBound {
		t.Errorf("decided on Redis again %v after it returned; want within %v", recovered, recoveryBound)
	}
	if d := time.Duration(slowest.Load()); d > bound {
		t.Errorf("a handler ran %v, more than the deadline and the store's timeout (%v) and the scheduling delay (%v)", d, answerBound, time.Duration(lag.Load()))
	}
	if policy == 0 {
		t.Errorf("no call made while Redis was down got the failure policy's answer (%d calls, %d at their deadline)", downCalls, deadlines)
	}
	if failures.Load() == 0 {
		t.Error("no failure was reported to OnError")
	}
	if p := int(peak.Load()); p > before+goroutineInFlight {
		t.Errorf("goroutines peaked at %d under load, from %d: more than the calls in flight need", p, before)
	}
	if after > before+goroutineSlack {
		t.Errorf("goroutines: %d after the load, from %d before: calls left goroutines behind", after, before)
	}
}

// dialTimed serves srv behind a loopback gRPC listener whose interceptor
// records the longest a handler ran in slowest (ns), and returns a client.
func dialTimed(t *testing.T, srv rlsv3.RateLimitServiceServer, slowest *atomic.Int64) rlsv3.RateLimitServiceClient {
	_, client := rlstest.Serve(t, srv, grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		res, err := h(ctx, req)
		d := int64(time.Since(start))
		for {
			old := slowest.Load()
			if d <= old || slowest.CompareAndSwap(old, d) {
				break
			}
		}
		return res, err
	}))
	return client
}

// rss is the process's resident set in KiB (0 where /proc is missing).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
