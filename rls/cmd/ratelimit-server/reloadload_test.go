package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// userPerDay is a version of the load domain: user at perDay a day, and
// more descriptors after it.
func userPerDay(perDay int, more string) string {
	return fmt.Sprintf("domain: load\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: %d}\n%s", perDay, more)
}

// counter is a caller for its own user, sequential: it knows how many of
// its calls were admitted, so each answer's limit_remaining tells whether
// the count was kept.
type counter struct {
	mu       sync.Mutex
	calls    int
	admitted uint32
	limits   []uint32 // the limits its answers reported, each once
	faults   []string // calls that failed or reported a count not kept
}

func (k *counter) run(c rlsv3.RateLimitServiceClient, user string, done <-chan struct{}) {
	req := request("load", desc("user", user))
	for {
		select {
		case <-done:
			return
		case <-time.After(5 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := c.ShouldRateLimit(ctx, req)
		cancel()
		k.mu.Lock()
		k.calls++
		if fault := k.check(res, err); fault != "" && len(k.faults) < 10 {
			k.faults = append(k.faults, fmt.Sprintf("%s call %d: %s", user, k.calls, fault))
		}
		k.mu.Unlock()
	}
}

// check counts an answer and says what is wrong with it: an error, or a
// limit_remaining other than its limit less the calls admitted.
func (k *counter) check(res *rlsv3.RateLimitResponse, err error) string {
	if err != nil {
		return err.Error()
	}
	limit := res.GetStatuses()[0].GetCurrentLimit().GetRequestsPerUnit()
	if !slices.Contains(k.limits, limit) {
		k.limits = append(k.limits, limit)
	}
	left := res.Statuses[0].LimitRemaining
	switch res.OverallCode {
	case rlsv3.RateLimitResponse_OK:
		k.admitted++
		if limit < k.admitted || left != limit-k.admitted {
			return fmt.Sprintf("OK with %d of %d remaining after %d admitted", left, limit, k.admitted)
		}
	case rlsv3.RateLimitResponse_OVER_LIMIT:
		if left != 0 || limit > k.admitted {
			return fmt.Sprintf("OVER_LIMIT with %d of %d remaining after %d admitted", left, limit, k.admitted)
		}
	default:
		return res.OverallCode.String()
	}
	return ""
}

func (k *counter) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls
}

// TestReloadUnderLoad edits the runtime directory's file four times (a
// limit raised, a descriptor added, the limit lowered below what the
// callers have spent, then raised with the descriptor removed) while
// callers call without pause. Every call is answered OK or OVER_LIMIT,
// each version takes effect (polled, 10 s at most), every caller's
// answers say its count was kept across every reload (limit_remaining is
// the reported limit less its calls admitted), and a descriptor value
// called before the edits has its count after them.
func TestReloadUnderLoad(t *testing.T) {
	clearOfEdge(t, 24*time.Hour, 30*time.Second) // counts are per day
	dir, env := runtimeDir(t, map[string]string{"load.yaml": userPerDay(1000, "")})
	cmd, p, rest := start(t, buildForLoad(t), append(env, "REDIS_URL="+testredis.Start(t))...)
	c := dial(t, p.grpc)
	for i := range 5 {
		checkAnswer(t, "before the edits", ask1(t, c, request("load", desc("user", "kept"))), says(ok, within(1000, day, 999-uint32(i))))
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	callers := make([]*counter, 3)
	for i := range callers {
		callers[i] = &counter{}
		wg.Go(func() { callers[i].run(c, fmt.Sprintf("caller-%d", i), done) })
	}
	probes := 0
	// inForce polls, 10 s at most, until a new value's answer is ready;
	// then until every caller has called twice more, so that each has
	// called on the new version.
	inForce := func(what string, ready func(*rlsv3.RateLimitResponse) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			probes++
			res := ask1(t, c, request("load", desc("user", fmt.Sprintf("probe-%d", probes)), desc("tenant", "t"))).res
			if ready(res) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not in force after 10 s: %v", what, res)
			}
		}
		calls := make([]int, len(callers))
		for i, k := range callers {
			calls[i] = k.count()
		}
		deadline := time.Now().Add(10 * time.Second)
		for i, k := range callers {
			for k.count() < calls[i]+2 {
				if time.Now().After(deadline) {
					t.Fatalf("%s: caller %d stopped calling", what, i)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	// userLimit is whether user's limit is n, and tenant's has one.
	userLimit := func(n uint32, tenant bool) func(*rlsv3.RateLimitResponse) bool {
		return func(res *rlsv3.RateLimitResponse) bool {
			return res.Statuses[0].GetCurrentLimit().GetRequestsPerUnit() == n && (res.Statuses[1].CurrentLimit != nil) == tenant
		}
	}
	path := filepath.Join(dir, "load.yaml")
	const tenant = "  - key: tenant\n    rate_limit: {unit: hour, requests_per_unit: 1000000}\n"
	time.Sleep(200 * time.Millisecond) // the load before the first edit
	for _, v := range []struct {
		what   string
		perDay uint32
		more   string
	}{
		{"the limit raised", 2000, ""},
		{"a descriptor added", 2000, tenant},
		{"the limit lowered below the count", 3, tenant},
		{"the limit raised, the descriptor removed", 1500, ""},
	} {
		replaceFile(t, path, userPerDay(int(v.perDay), v.more))
		inForce(v.what, userLimit(v.perDay, v.more != ""))
	}
	close(done)
	wg.Wait()

	for i, k := range callers {
		t.Logf("caller %d: %d calls, %d admitted, limits %v", i, k.calls, k.admitted, k.limits)
		for _, f := range k.faults {
			t.Error(f)
		}
		if want := []uint32{1000, 2000, 3, 1500}; !slices.Equal(k.limits, want) {
			t.Errorf("caller %d was answered under limits %v, want each of %v in turn", i, k.limits, want)
		}
	}
	checkAnswer(t, "after the edits", ask1(t, c, request("load", desc("user", "kept"))), says(ok, within(1500, day, 1500-6)))
	stop(t, cmd, rest)
}
