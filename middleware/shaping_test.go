package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// queued sends n requests at once through a queue of 10 a second with
// maxDelay, on Redis's clock, and returns when each was served (wall
// clock, no monotonic reading: Redis TIME is the wall clock), the start,
// and the statuses and Retry-After values.
func queued(t *testing.T, h http.Handler, n int) (start time.Time, served []time.Time, statuses []int, retry []string) {
	t.Helper()
	served, statuses, retry = make([]time.Time, n), make([]int, n), make([]string, n)
	start = time.Now().Round(0)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/export", nil))
			statuses[i], retry[i] = w.Code, w.Header().Get("Retry-After")
			if w.Code == 200 {
				served[i], _ = time.Parse(time.RFC3339Nano, w.Body.String())
			}
		})
	}
	wg.Wait()
	return start, served, statuses, retry
}

// stamp answers the instant it serves the request.
var stamp = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprint(w, time.Now().Round(0).Format(time.RFC3339Nano))
})

func queueRule(maxDelay time.Duration) middleware.Rule {
	return middleware.Rule{Rule: limiter.Rule{Name: "export", Algorithm: algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: maxDelay}}, Identity: keyfunc.Constant("all")}
}

// 50 requests at once through a queue of 10 a second: with a 10 s maximum
// delay all are served, the k-th no earlier than 100k ms after the burst
// began; with a 2 s maximum, 21 are served and 29 refused with
// Retry-After 1 (a turn within 2 s frees up in 100 ms). The backends run
// side by side, each on its own server under a prefix of its own: the
// bursts mostly wait their turns, and a busy CPU can only serve a request
// later than its turn, never earlier.
func TestQueueShapesABurst(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			// A timeout the race detector cannot reach, failing closed: a
			// request let through on a timeout would skip its turn.
			slow := redisstore.WithTimeout(10 * time.Second)
			prefix := limiter.WithPrefix(fmt.Sprintf("shape%d", time.Now().UnixNano()))
			closed := middleware.WithFailClosed()
			h := mwtest.New(t, b.Client, []middleware.Rule{queueRule(10 * time.Second)}, prefix, slow, closed)(stamp)
			start, served, statuses, _ := queued(t, h, 50)
			if slices.ContainsFunc(statuses, func(s int) bool { return s != 200 }) {
				t.Fatalf("statuses %v, want all 200", statuses)
			}
			slices.SortFunc(served, func(a, b time.Time) int { return a.Compare(b) })
			var late time.Duration
			for k, at := range served {
				turn := start.Add(time.Duration(k) * 100 * time.Millisecond)
				if at.Before(turn) {
					t.Errorf("request %d served %v before its turn", k, turn.Sub(at))
				}
				late = max(late, at.Sub(turn))
			}
			t.Logf("%s: 50 served over %v, each at or after its turn, at most %v after it", b.Name, served[49].Sub(served[0]), late)

			// The refusals are counted on a clock held still, so that the
			// count does not depend on how long a loaded machine takes to
			// send the 50: all of them are decided at one instant.
			prefix = limiter.WithPrefix(fmt.Sprintf("shape%d", time.Now().UnixNano()))
			frozen := time.Now()
			held := limiter.WithClock(func() time.Time { return frozen })
			h = mwtest.New(t, b.Client, []middleware.Rule{queueRule(2 * time.Second)}, prefix, slow, closed, held)(stamp)
			_, _, statuses, retry := queued(t, h, 50)
			ok, refused := 0, 0
			for i, s := range statuses {
				switch {
				case s == 200:
					ok++
				case s == 429 && retry[i] == "1":
					refused++
				default:
					t.Errorf("status %d, Retry-After %q", s, retry[i])
				}
			}
			if ok != 21 || refused != 29 {
				t.Errorf("%d served and %d refused, want 21 and 29", ok, refused)
			}
		})
	}
}

// Requests that give up while queued free their turns: with the clock held
// still, 5 requests take turns 0 to 400 ms and 5 more 500 to 900 ms; those
// 5 give up; the next request's turn is then 500 ms away, not 1 s.
func TestQueueGivesUpTurns(t *testing.T) {
	_, c := redistest.Mini(t)
	var decided atomic.Int32
	h := mwtest.New(t, c, []middleware.Rule{queueRule(10 * time.Second)}, clock(), middleware.WithFailClosed(),
		redisstore.WithTimeout(10*time.Second), middleware.WithHook(func(guard.Event) { decided.Add(1) }))(stamp)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range 10 {
		r := httptest.NewRequest("GET", "/export", nil)
		if i >= 5 {
			r = r.WithContext(ctx)
		}
		wg.Go(func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			codes[i] = w.Code
		})
		for decided.Load() <= int32(i) { // in order: request i takes turn i
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	wg.Wait()
	// The patient ones were served in turn; the others were answered 503
	// when they gave up.
	if want := []int{200, 200, 200, 200, 200, 503, 503, 503, 503, 503}; !slices.Equal(codes, want) {
		t.Errorf("statuses %v, want %v", codes, want)
	}
	admin, _ := limiter.New(mwtest.RedisStore(t, c), []limiter.Rule{{Name: "export", Algorithm: queueRule(10 * time.Second).Algorithm}},
		limiter.WithClock(func() time.Time { return mwtest.Epoch }))
	d, err := admin.Status(t.Context(), "export", "all")
	if err != nil || d.Results[0].Delay != 500*time.Millisecond {
		t.Errorf("next turn %+v %v, want 500 ms away", d.Results, err)
	}
}

// 64 goroutines on one key with 10 in flight at most: never more than 10
// handlers run at once, every request is answered, and a handler that
// panics still releases its slot.
func TestConcurrencyLimit(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			rule := middleware.Rule{Rule: limiter.Rule{Name: "in-flight", Algorithm: algorithms.Concurrency{Limit: 10, TTL: time.Minute}}, Identity: keyfunc.Constant("key")}
			var running, peak atomic.Int32
			// Fail closed, with a timeout the race detector cannot reach: a
			// request let through on a Redis timeout would hold no slot.
			h := mwtest.New(t, b.Client, []middleware.Rule{rule}, middleware.WithHeaders(headers.Both),
				middleware.WithFailClosed(),
				limiter.WithPrefix(fmt.Sprintf("conc%d", time.Now().UnixNano())), redisstore.WithTimeout(10*time.Second))(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := running.Add(1)
					defer running.Add(-1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					if r.URL.Path == "/panic" {
						panic("handler failed")
					}
					time.Sleep(2 * time.Millisecond)
				}))
			var served, refused atomic.Int32
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for range 10 {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
						switch w.Code {
						case 200:
							served.Add(1)
						case 429:
							refused.Add(1)
						}
					}
				})
			}
			wg.Wait()
			t.Logf("%s: %d served, %d refused, at most %d in flight", b.Name, served.Load(), refused.Load(), peak.Load())
			if peak.Load() > 10 || served.Load()+refused.Load() != 640 || served.Load() < 10 {
				t.Errorf("peak %d in flight, %d served + %d refused of 640", peak.Load(), served.Load(), refused.Load())
			}
			func() {
				defer func() { _ = recover() }()
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/panic", nil))
			}()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Header().Get("X-RateLimit-Remaining") != "9" || w.Header().Get("RateLimit-Policy") != `"in-flight";q=10;qu="concurrent-requests"` {
				t.Errorf("after a panic: %v, want every slot back (9 left while this one runs)", w.Header())
			}
		})
	}
}

// A concurrency limit of 1 with a 30 s TTL, its slot held by a request
// in progress: the next one is refused with a wait a client can act on
// (1 s by default, or the configured one), in Retry-After, the RateLimit
// field's t and the problem body alike, also when a Plan chose the limit;
// X-RateLimit-Reset still says when the slot expires at the latest. The
// request holding the slot is told t=1 too, not the TTL.
func TestConcurrencyRefusalRetryAfter(t *testing.T) {
	inFlight := algorithms.Concurrency{Limit: 1, TTL: 30 * time.Second}
	expiry := strconv.FormatInt(mwtest.Epoch.Add(30*time.Second).Unix(), 10)
	for _, tc := range []struct {
		name  string
		rule  middleware.Rule
		opts  []any
		retry string
	}{
		{"default", middleware.Rule{Rule: limiter.Rule{Algorithm: inFlight}}, nil, "1"},
		{"configured", middleware.Rule{Rule: limiter.Rule{Algorithm: inFlight}}, []any{middleware.WithConcurrencyRetryAfter(5 * time.Second)}, "5"},
		{"chosen by a plan", middleware.Rule{Rule: limiter.Rule{Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}},
			Plan: func(*http.Request) algorithms.Algorithm { return inFlight }}, nil, "1"},
	} {
		for _, backend := range []string{"miniredis", "memstore"} {
			rule := tc.rule
			rule.Name, rule.Identity = "in-flight", keyfunc.Constant("all")
			var store any = memstore.Must()
			if backend == "miniredis" {
				_, store = redistest.Mini(t)
			}
			mw := mwtest.New(t, store, []middleware.Rule{rule}, append([]any{clock(), middleware.WithHeaders(headers.Both)}, tc.opts...)...)
			entered, release := make(chan struct{}), make(chan struct{})
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					close(entered)
					<-release
				}
			}))
			holder := httptest.NewRecorder()
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(holder, httptest.NewRequest("GET", "/slow", nil))
			}()
			<-entered
			res := do(h, "GET", "/", "203.0.113.9:1", "Accept", "application/json")
			close(release)
			<-done
			var p mwtest.Problem
			err := json.NewDecoder(res.Body).Decode(&p)
			type response struct{ status, retryAfter, rateLimit, reset string }
			got := response{strconv.Itoa(res.StatusCode), res.Header.Get("Retry-After"), res.Header.Get("RateLimit"), res.Header.Get("X-RateLimit-Reset")}
			want := response{"429", tc.retry, `"in-flight";r=0;t=` + tc.retry, expiry}
			if got != want || err != nil || strconv.FormatInt(p.RetryAfter, 10) != tc.retry {
				t.Errorf("%s on %s: refusal got %+v, retry_after %d (%v), want %+v, retry_after %s", tc.name, backend, got, p.RetryAfter, err, want, tc.retry)
			}
			if got, want := holder.Header().Get("RateLimit"), `"in-flight";r=0;t=`+tc.retry; got != want {
				t.Errorf("%s on %s: the holder's RateLimit %q, want %q", tc.name, backend, got, want)
			}
		}
	}
}

// A hook that panics after a slot was taken (a label mismatch in a user's
// metrics, say) does not keep the slot until its TTL: the decision is
// settled before the panic goes on, and the next request finds the slot
// free.
func TestPanickingHookReleasesTheSlot(t *testing.T) {
	rule := middleware.Rule{Rule: limiter.Rule{Name: "in-flight", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Hour}}, Identity: keyfunc.Constant("all")}
	boom := true
	h := mwtest.New(t, memstore.Must(), []middleware.Rule{rule}, middleware.WithHook(func(guard.Event) {
		if boom {
			boom = false
			panic("hook failed")
		}
	}))(ok)
	panicsOnceThenAdmits(t, h, "the hook", "the only slot back")
}
