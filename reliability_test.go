package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// The fault tests drive a real HTTP server over loopback with a bounded
// load (goroutines for a fixed time) while they break the real Redis behind
// it, and record what every request got.

const faultTimeout = 100 * time.Millisecond

// hangBound is far above the timeout and below go-redis's 3 s ReadTimeout:
// a request slower than this means the timeout was not enforced (a hang),
// not a slow machine.
const hangBound = 2 * time.Second

// sample is one request's outcome; phase is the fault phase current when
// it both started and ended ("" when it straddled a change).
type sample struct {
	status  int
	err     error
	latency time.Duration
	headers bool
	phase   string
}

type phases struct {
	mu  sync.Mutex
	cur string
	seq int
}

func (p *phases) get() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur, p.seq
}

func (p *phases) set(name string) {
	p.mu.Lock()
	p.cur, p.seq = name, p.seq+1
	p.mu.Unlock()
}

// drive sends requests from 16 goroutines until script returns, each as
// one of 100 clients, and returns every outcome.
func drive(t *testing.T, url string, ph *phases, script func()) []sample {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var out []sample
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("X-Client", strconv.Itoa((g*31+i)%100))
				_, seqBefore := ph.get()
				start := time.Now()
				res, err := client.Do(req)
				s := sample{err: err, latency: time.Since(start)}
				if err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					s.status, s.headers = res.StatusCode, res.Header.Get("X-RateLimit-Limit") != ""
				}
				if after, seqAfter := ph.get(); seqAfter == seqBefore {
					s.phase = after
				}
				mu.Lock()
				out = append(out, s)
				mu.Unlock()
			}
		})
	}
	script()
	stop.Store(true)
	wg.Wait()
	return out
}

// tally summarizes samples of one phase.
type tally struct {
	sent, answered, admitted, denied, unavailable, errs int
	worst                                               time.Duration
	withHeaders                                         int
}

func (a tally) String() string {
	return fmt.Sprintf("sent %d, answered %d, admitted %d, denied %d, 503 %d, transport errors %d, worst latency %v",
		a.sent, a.answered, a.admitted, a.denied, a.unavailable, a.errs, a.worst.Round(time.Millisecond))
}

func count(samples []sample, phase string) tally {
	var a tally
	for _, s := range samples {
		if phase != "*" && s.phase != phase {
			continue
		}
		a.sent++
		a.worst = max(a.worst, s.latency)
		if s.err != nil {
			a.errs++
			continue
		}
		a.answered++
		switch s.status {
		case http.StatusOK:
			a.admitted++
		case http.StatusTooManyRequests:
			a.denied++
		case http.StatusServiceUnavailable:
			a.unavailable++
		}
		if s.headers {
			a.withHeaders++
		}
	}
	return a
}

func faultServer(t *testing.T, s *redistest.Server, st stack) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var reported atomic.Int64
	// No deny cache: denied clients would be answered locally and never
	// reach the broken Redis.
	st.Store = append([]redisstore.Option{redisstore.WithTimeout(faultTimeout)}, st.Store...)
	st.Lim = append([]limiter.Option{limiter.WithDenyCache(0, 0)}, st.Lim...)
	st.MW = append([]middleware.Option{middleware.WithErrorHandler(func(_ *http.Request, err error) {
		if errors.Is(err, limiter.ErrBackend) {
			reported.Add(1)
		}
	})}, st.MW...)
	mw := limit(t, s.Client, []middleware.Rule{{Rule: limiter.Rule{Name: "per-client", Algorithm: algorithms.FixedWindow{Limit: 5, Window: time.Minute}}, Identity: keyfunc.Header("X-Client")}}, st)
	srv := httptest.NewServer(mw(ok))
	t.Cleanup(srv.Close)
	return srv, &reported
}

func TestRedisKilledUnderLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   stack
	}{
		{"fail open", stack{}},
		{"fail closed", stack{MW: []middleware.Option{middleware.WithFailClosed()}}},
		{"in-process fallback", stack{Lim: []limiter.Option{limiter.WithFallback(memstore.Must()), limiter.WithRetryInterval(200 * time.Millisecond)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redistest.Start(t)
			srv, reported := faultServer(t, s, tc.st)
			ph := &phases{cur: "before"}
			samples := drive(t, srv.URL, ph, func() {
				time.Sleep(500 * time.Millisecond)
				ph.set("killing")
				s.Stop()
				ph.set("down")
				time.Sleep(700 * time.Millisecond)
				ph.set("restarting")
				s.Restart(t)
				// The store is back once a decision has reached the
				// restarted Redis (its breaker's or the fallback's probe,
				// whose times this test does not guess): its first write.
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					if n, err := s.Client.DBSize(context.Background()).Result(); err == nil && n > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Error("no decision reached Redis within 10 s of its restart")
						break
					}
				}
				time.Sleep(50 * time.Millisecond) // for that decision's reply to reach the store
				ph.set("after")
				time.Sleep(500 * time.Millisecond)
			})
			before, down, after, all := count(samples, "before"), count(samples, "down"), count(samples, "after"), count(samples, "*")
			t.Logf("%s: all: %v", tc.name, all)
			t.Logf("%s: Redis down: %v; Redis errors reported: %d", tc.name, down, reported.Load())

			if all.errs != 0 || all.answered != all.sent {
				t.Errorf("%d requests got no HTTP answer", all.errs)
			}
			if all.worst > hangBound {
				t.Errorf("worst latency %v: the %v timeout was not enforced", all.worst, faultTimeout)
			}
			if before.admitted == 0 || before.unavailable != 0 || before.withHeaders != before.answered {
				t.Errorf("before the fault: %v, %d with headers", before, before.withHeaders)
			}
			if down.sent == 0 || reported.Load() == 0 {
				t.Fatalf("the outage saw %d requests and %d reported errors", down.sent, reported.Load())
			}
			switch tc.name {
			case "fail open":
				if down.admitted != down.answered || down.withHeaders != 0 {
					t.Errorf("fail open while down: %v, %d with headers; want all admitted without headers", down, down.withHeaders)
				}
			case "fail closed":
				if down.unavailable != down.answered {
					t.Errorf("fail closed while down: %v; want all 503", down)
				}
			default:
				if down.unavailable != 0 || down.withHeaders != down.answered || down.denied == 0 {
					t.Errorf("fallback while down: %v; want local decisions, with denials, never 503", down)
				}
			}
			if after.sent == 0 || after.unavailable != 0 || after.withHeaders != after.answered {
				t.Errorf("after the restart: %v, %d with headers; want Redis decisions again", after, after.withHeaders)
			}
			if n, err := s.Client.DBSize(context.Background()).Result(); err != nil || n == 0 {
				t.Errorf("after the restart Redis holds %d keys (%v): decisions did not resume on Redis", n, err)
			}
		})
	}
}

func TestScriptFlushUnderLoad(t *testing.T) {
	s := redistest.Start(t)
	srv, reported := faultServer(t, s, stack{MW: []middleware.Option{middleware.WithFailClosed()}})
	ph := &phases{cur: "flushing"}
	flushes := 0
	samples := drive(t, srv.URL, ph, func() {
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); flushes++ {
			if err := s.Client.ScriptFlush(context.Background()).Err(); err != nil {
				t.Error(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	all := count(samples, "*")
	t.Logf("SCRIPT FLUSH %d times under load: %v", flushes, all)
	if all.unavailable != 0 || all.errs != 0 || reported.Load() != 0 || all.admitted == 0 || all.denied == 0 {
		t.Errorf("requests failed because of SCRIPT FLUSH: %v, %d errors reported", all, reported.Load())
	}
}

func TestSlowRedis(t *testing.T) {
	s := redistest.Start(t)
	srv, reported := faultServer(t, s, stack{MW: []middleware.Option{middleware.WithFailClosed()}})
	ph := &phases{cur: "before"}
	samples := drive(t, srv.URL, ph, func() {
		time.Sleep(300 * time.Millisecond)
		if err := s.Client.Do(context.Background(), "CLIENT", "PAUSE", 1000, "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		ph.set("paused")
		time.Sleep(900 * time.Millisecond)
		ph.set("resuming")
		time.Sleep(600 * time.Millisecond)
		ph.set("after")
		time.Sleep(300 * time.Millisecond)
	})
	paused, after, all := count(samples, "paused"), count(samples, "after"), count(samples, "*")
	t.Logf("CLIENT PAUSE 1 s: paused: %v; all: %v; errors reported %d", paused, all, reported.Load())
	if all.worst > hangBound || all.errs != 0 {
		t.Errorf("slow Redis: %v; want every request answered within the timeout", all)
	}
	if paused.unavailable == 0 || reported.Load() == 0 {
		t.Errorf("while paused: %v; want timeouts answered 503 and reported", paused)
	}
	if after.sent == 0 || after.unavailable != 0 {
		t.Errorf("after the pause: %v", after)
	}
}

func TestRedisMemoryFull(t *testing.T) {
	s := redistest.Start(t, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
	ctx := context.Background()
	// Fill memory to the brim: large values, then ever smaller ones, until
	// even a tiny write is refused.
	n := 0
	for size := 256 << 10; size >= 1; size /= 4 {
		for ; ; n++ {
			if err := s.Client.Set(ctx, "ballast"+strconv.Itoa(n), make([]byte, size), 0).Err(); err != nil {
				break
			}
			if n > 100_000 {
				t.Fatal("maxmemory never reached")
			}
		}
	}
	for _, tc := range []struct {
		policy string
		opts   []middleware.Option
		want   int
	}{{"fail open", nil, 200}, {"fail closed", []middleware.Option{middleware.WithFailClosed()}, 503}} {
		var errs []error
		h := limit(t, s.Client, []middleware.Rule{perIP(5)}, stack{MW: append(tc.opts,
			middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))})(ok)
		res := do(h, "GET", "/", "203.0.113.9:1")
		if res.StatusCode != tc.want || len(errs) != 1 || !errors.Is(errs[0], limiter.ErrBackend) {
			t.Errorf("%s with Redis full: status %d, errors %v; want %d and one ErrBackend", tc.policy, res.StatusCode, errs, tc.want)
		}
		t.Logf("%s with Redis full: status %d, error reported: %v", tc.policy, res.StatusCode, errs)
	}
}
