package main_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// envoyDeadline is Envoy's default timeout for a rate limit call.
const envoyDeadline = 20 * time.Millisecond

// slack is what a call may take beyond its deadline on a loaded machine
// (the race detector, other builds) and still count as answered in time.
const slack = time.Second

// outcome is how one call of the load ended.
type outcome struct {
	sent time.Time
	took time.Duration
	code codes.Code // codes.OK for an answer, whatever it said
	err  error
}

// load is callers calling the server continuously, each for its own
// value, with Envoy's deadline, until stop.
type load struct {
	mu       sync.Mutex
	outcomes []outcome
	done     chan struct{}
	wg       sync.WaitGroup
}

func startLoad(c rlsv3.RateLimitServiceClient, callers int) *load {
	l := &load{done: make(chan struct{})}
	for i := range callers {
		req := request("load", desc("user", fmt.Sprintf("caller-%d", i)))
		l.wg.Go(func() {
			for {
				select {
				case <-l.done:
					return
				case <-time.After(5 * time.Millisecond):
				}
				ctx, cancel := context.WithTimeout(context.Background(), envoyDeadline)
				sent := time.Now()
				_, err := c.ShouldRateLimit(ctx, req)
				took := time.Since(sent)
				cancel()
				l.mu.Lock()
				l.outcomes = append(l.outcomes, outcome{sent, took, status.Code(err), err})
				l.mu.Unlock()
			}
		})
	}
	return l
}

// stop stops the callers and returns every call's outcome.
func (l *load) stop() []outcome {
	close(l.done)
	l.wg.Wait()
	return l.outcomes
}

// TestRedisOutageUnderLoad kills the server's redis-server under load
// from callers with Envoy's 20 ms deadline, keeps it down 1.5 s and
// starts it again on its address. Every call ends within its deadline
// (and a loaded machine's slack): answered, UNAVAILABLE (for Envoy's
// failure_mode_deny to decide), or past its deadline, never hung; none
// that ended before the kill is UNAVAILABLE, some sent while Redis is
// down are; the
// server decides again within 5 s of Redis's return; its goroutines are
// back near their count before. Its RSS is logged.
func TestRedisOutageUnderLoad(t *testing.T) {
	redis := testredis.StartServer(t)
	_, env := runtimeDir(t, map[string]string{"load.yaml": "domain: load\ndescriptors:\n  - key: user\n    rate_limit: {unit: hour, requests_per_unit: 1000000}\n"})
	cmd, p, rest := start(t, buildForLoad(t), append(env, "REDIS_URL="+redis.Addr)...)
	c := dial(t, p.grpc)
	checkAnswer(t, "before the load", ask1(t, c, request("load", desc("user", "probe"))), says(ok, within(1000000, hour, 999999)))
	pid := cmd.Process.Pid
	t.Logf("RSS at start: %s", rss(pid))

	l := startLoad(c, 4)
	time.Sleep(500 * time.Millisecond)
	before := goroutines(t, p.debug)
	t.Logf("under load: %d goroutines, RSS %s", before, rss(pid))

	killed := time.Now()
	redis.Stop(t)
	time.Sleep(750 * time.Millisecond)
	t.Logf("Redis down: RSS %s", rss(pid))
	time.Sleep(750 * time.Millisecond)
	redis.Restart(t)
	restored := time.Now()

	// Decided again within 5 s of Redis's return.
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		res, err := c.ShouldRateLimit(ctx, request("load", desc("user", fmt.Sprintf("recovery-%d", i))))
		cancel()
		if err == nil && res.OverallCode == ok {
			t.Logf("decided again %v after Redis's return", time.Since(restored).Round(time.Millisecond))
			break
		}
		if time.Since(restored) > 5*time.Second {
			t.Fatalf("not decided 5 s after Redis's return: %v %v", res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Its goroutines back near their number before, within 5 s.
	after := goroutines(t, p.debug)
	for deadline := time.Now().Add(5 * time.Second); after > before+50 && time.Now().Before(deadline); after = goroutines(t, p.debug) {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("after recovery, under load: %d goroutines (%d before), RSS %s", after, before, rss(pid))
	if after > before+50 {
		t.Errorf("%d goroutines 5 s after recovery, %d before the outage", after, before)
	}
	time.Sleep(300 * time.Millisecond) // calls of the load after recovery
	outcomes := l.stop()

	phases := [3]string{"before", "during", "after"}
	counts := [3]map[codes.Code]int{{}, {}, {}}
	for _, o := range outcomes {
		phase := 1 // in flight at the kill or the return: down
		switch {
		case o.sent.Add(o.took).Before(killed):
			phase = 0
		case o.sent.After(restored):
			phase = 2
		}
		counts[phase][o.code]++
		if o.took > envoyDeadline+slack {
			t.Errorf("a call %s the outage took %v (deadline %v)", phases[phase], o.took, envoyDeadline)
		}
		switch o.code {
		case codes.OK, codes.Unavailable, codes.DeadlineExceeded:
		default:
			t.Errorf("a call %s the outage failed: %v", phases[phase], o.err)
		}
	}
	for i, n := range counts {
		t.Logf("calls %s the outage: %v", phases[i], n)
	}
	if counts[0][codes.OK] == 0 || counts[0][codes.Unavailable] > 0 {
		t.Errorf("before the outage: %v, want calls answered and none UNAVAILABLE", counts[0])
	}
	if counts[1][codes.Unavailable] == 0 {
		t.Errorf("while Redis was down: %v, want calls answered UNAVAILABLE", counts[1])
	}
	if counts[2][codes.OK] == 0 {
		t.Errorf("after Redis's return: %v, want calls answered", counts[2])
	}
	t.Logf("RSS at the end: %s", rss(pid))
	stop(t, cmd, rest)
}

// goroutines is the server's goroutine count, the first line of its
// debug port's /debug/pprof/goroutine?debug=1: "goroutine profile: total N".
func goroutines(t *testing.T, debug string) int {
	t.Helper()
	res, err := http.Get("http://" + debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	var n int
	if _, serr := fmt.Sscanf(line, "goroutine profile: total %d", &n); err != nil || serr != nil {
		t.Fatalf("goroutine profile: %q (%v, %v)", line, err, serr)
	}
	return n
}

// rss is the VmRSS line of process pid's /proc status, for the log.
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "no VmRSS"
}
