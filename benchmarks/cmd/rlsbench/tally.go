package main

import (
	"slices"
	"sync"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/status"
)

// load is one load phase's outcome on one server.
type load struct {
	calls    int64             // calls made, or due (open loop)
	decided  int64             // calls answered with a decision
	admitted int64             // decisions OK
	errs     int64             // calls that failed, or were due and not sent (open loop)
	elapsed  time.Duration     // the phase's length
	p50, p99 time.Duration     // of every call made
	cost     cost              // per decision
	errCodes map[string]int64  // errs by gRPC code, or "not sent"
	errFirst map[string]string // the first error's message of each code
}

// rate is the decisions per second.
func (l load) rate() float64 { return float64(l.decided) / l.elapsed.Seconds() }

// tally counts a phase's calls from many goroutines.
type tally struct {
	mu  sync.Mutex
	lat []time.Duration
	l   load
}

// add counts a call that took d and got res or err.
func (t *tally) add(d time.Duration, res *rlsv3.RateLimitResponse, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lat = append(t.lat, d)
	t.l.calls++
	switch {
	case err != nil:
		st := status.Convert(err)
		t.fail(st.Code().String(), st.Message())
	case res.GetOverallCode() == rlsv3.RateLimitResponse_OK:
		t.l.decided++
		t.l.admitted++
	default:
		t.l.decided++
	}
}

// drop counts a call that was due and not made.
func (t *tally) drop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.l.calls++
	t.fail("not sent", "due while too many calls were in flight")
}

// fail counts an error of kind with message; t.mu is held.
func (t *tally) fail(kind, message string) {
	t.l.errs++
	if t.l.errCodes == nil {
		t.l.errCodes, t.l.errFirst = map[string]int64{}, map[string]string{}
	}
	if t.l.errCodes[kind]++; t.l.errCodes[kind] == 1 {
		t.l.errFirst[kind] = message
	}
}

// load is the phase's outcome, over elapsed.
func (t *tally) load(elapsed time.Duration) load {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.l
	l.elapsed = elapsed
	slices.Sort(t.lat)
	if n := len(t.lat); n > 0 {
		l.p50, l.p99 = t.lat[n/2], t.lat[n*99/100]
	}
	return l
}
