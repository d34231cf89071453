package rls_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

const algorithmsConfig = `
domain: edge
descriptors:
  - key: a
    rate_limit: {unit: minute, requests_per_unit: 100, algorithm: gcra, burst: 200}
  - key: b
    rate_limit: {unit: second, unit_multiplier: 30, requests_per_unit: 10, algorithm: sliding_window}
  - key: c
    rate_limit: {window: 90s, requests_per_unit: 5, algorithm: token_bucket}
  - key: d
    rate_limit: {window: 2h, requests_per_unit: 7, algorithm: sliding_log}
  - key: e
    rate_limit: {unit: hour, requests_per_unit: 3, algorithm: leaky_bucket, burst: 6}
  - key: f
    value: all
    rate_limit: {unit: second, requests_per_unit: 1000, lease: 1s}
  - key: g
    rate_limit: {unit: day, requests_per_unit: 4, algorithm: fixed_window}
`

func TestParseAlgorithmKeys(t *testing.T) {
	c, err := rls.Parse("edge.yaml", []byte(algorithmsConfig))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]limiter.Rule{}
	for _, r := range rls.Limits(c) {
		got[r.Name] = r
	}
	for _, want := range []limiter.Rule{
		{Name: "edge.a", Algorithm: algorithms.GCRA{Rate: 100, Period: time.Minute, Burst: 200}},
		{Name: "edge.b", Algorithm: algorithms.SlidingWindow{Limit: 10, Window: 30 * time.Second}},
		{Name: "edge.c", Algorithm: algorithms.TokenBucket{Capacity: 5, Rate: 5, Period: 90 * time.Second}},
		{Name: "edge.d", Algorithm: algorithms.SlidingLog{Limit: 7, Window: 2 * time.Hour}},
		{Name: "edge.e", Algorithm: algorithms.LeakyBucket{Capacity: 6, Rate: 3, Period: time.Hour}},
		{Name: "edge.f_all", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Second}, Lease: time.Second},
		{Name: "edge.g", Algorithm: algorithms.FixedWindow{Limit: 4, Window: 24 * time.Hour}},
	} {
		if got[want.Name] != want {
			t.Errorf("rule %q = %+v, want %+v", want.Name, got[want.Name], want)
		}
	}
	if len(got) != 8 {
		t.Errorf("%d rules, want 7 and the domain's override rule: %v", len(got), got)
	}
}

// TestWindowCurrentLimit checks that a window is reported in the longest
// unit it is a whole number of.
func TestWindowCurrentLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, algorithmsConfig, rls.Options{})
		res := ask(t, c, desc("b", "x"), desc("c", "x"), desc("d", "x"))
		for i, want := range []struct {
			unit rlsv3.RateLimitResponse_RateLimit_Unit
			mult uint32
		}{
			{rlsv3.RateLimitResponse_RateLimit_SECOND, 30},
			{rlsv3.RateLimitResponse_RateLimit_SECOND, 90},
			{rlsv3.RateLimitResponse_RateLimit_HOUR, 2},
		} {
			l := res.Statuses[i].CurrentLimit
			if l.GetUnit() != want.unit || l.GetUnitMultiplier().GetValue() != want.mult {
				t.Errorf("status %d: current_limit %v, want %v times %d", i, l, want.unit, want.mult)
			}
		}
	})
}

func TestAlgorithmKeyProblems(t *testing.T) {
	head := "domain: d\ndescriptors:\n  - key: a\n"
	cases := []struct{ name, rate, want string }{
		{"unknown algorithm", "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: gcr}\n",
			`f.yaml:4:65: descriptors[0].rate_limit.algorithm: found "gcr"; allowed: fixed_window, sliding_window, sliding_log, token_bucket, leaky_bucket, gcra`},
		{"concurrency", "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: concurrency}\n",
			`f.yaml:4:65: descriptors[0].rate_limit.algorithm: found "concurrency": refused for RLS, because an RLS call takes a slot and no call gives it back`},
		{"queue", "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: queue}\n",
			`f.yaml:4:65: descriptors[0].rate_limit.algorithm: found "queue": refused for RLS, because a queue admits by delaying a request, and Envoy waits about 20 ms`},
		{"burst on a window", "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: sliding_window, burst: 2}\n",
			`f.yaml:4:88: descriptors[0].rate_limit.burst: found a burst on sliding_window; allowed: a burst only with token_bucket, leaky_bucket or gcra`},
		{"burst zero", "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: gcra, burst: 0}\n",
			`f.yaml:4:78: descriptors[0].rate_limit.burst: found "0"; allowed: a whole number from 1 to 4294967295`},
		{"multiplier", "    rate_limit: {unit: second, requests_per_unit: 1, unit_multiplier: -2}\n",
			`f.yaml:4:71: descriptors[0].rate_limit.unit_multiplier: found "-2"; allowed: a whole number`},
		{"window and unit", "    rate_limit: {unit: second, window: 2s, requests_per_unit: 1}\n",
			`f.yaml:4:40: descriptors[0].rate_limit.window: found a window with a unit; allowed: one of them`},
		{"window not seconds", "    rate_limit: {window: 1500ms, requests_per_unit: 1}\n",
			`f.yaml:4:26: descriptors[0].rate_limit.window: found "1500ms"; allowed: a whole number of seconds`},
		{"window not a duration", "    rate_limit: {window: often, requests_per_unit: 1}\n",
			`f.yaml:4:26: descriptors[0].rate_limit.window: found "often"; allowed: a positive duration`},
		{"window too long", "    rate_limit: {window: 100000h, requests_per_unit: 1}\n",
			`f.yaml:4:17: descriptors[0].rate_limit: found FixedWindow(1 per 100000h0m0s): invalid algorithm: FixedWindow.Window must be at most`},
		{"lease on a log", "    rate_limit: {unit: second, requests_per_unit: 1, algorithm: sliding_log, lease: 1s}\n",
			`f.yaml:4:85: descriptors[0].rate_limit.lease: found "1s": a SlidingLog(1 per 1s) cannot be leased: its units are not interchangeable; allowed: a lease only on fixed_window, sliding_window, token_bucket, leaky_bucket, gcra`},
		{"lease too long", "    rate_limit: {unit: second, requests_per_unit: 1, lease: 2h}\n",
			`f.yaml:4:61: descriptors[0].rate_limit.lease: found "2h": lease 2h0m0s outside 0 to 1m0s`},
		{"lease in shadow", "    shadow_mode: true\n    rate_limit: {unit: second, requests_per_unit: 1, lease: 1s}\n",
			`f.yaml:5:61: descriptors[0].rate_limit.lease: found "1s": a shadow rule cannot be leased (a lease spends units the rule may not consume); allowed: no lease on a shadow_mode descriptor`},
		{"unlimited with algorithm", "    rate_limit: {unlimited: true, algorithm: gcra}\n",
			`f.yaml:4:46: descriptors[0].rate_limit.algorithm: found algorithm with unlimited: true; allowed: none`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rls.Parse("f.yaml", []byte(head+tc.rate))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to start %q", err, tc.want)
			}
			var p *config.Problem
			if !errors.As(err, &p) || !errors.Is(err, ratelimit.ErrConfig) {
				t.Errorf("error %v is not a config.Problem wrapping ErrConfig", err)
			}
		})
	}
}

// TestGCRABurst sends a GCRA descriptor its burst, one by one, then one
// more, which is refused: its fields are the rule's rate per minute, the
// units left, and the time until the whole burst is back.
func TestGCRABurst(t *testing.T) {
	const src = "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 60, algorithm: gcra, burst: 5}\n"
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, src, rls.Options{ResponseHeaders: true})
		start := time.Now()
		for i := range 5 {
			res := ask(t, c, desc("k", "v"))
			same(t, "within the burst", summary(res), []any{ok, ok, uint32(4 - i)})
		}
		res := ask(t, c, desc("k", "v"))
		same(t, "beyond the burst", summary(res), []any{over, over, uint32(0)})
		st := res.Statuses[0]
		if l := st.CurrentLimit; l.GetRequestsPerUnit() != 60 || l.GetUnit() != rlsv3.RateLimitResponse_RateLimit_MINUTE || l.GetUnitMultiplier() != nil {
			t.Errorf("current_limit %v, want 60 per MINUTE", l)
		}
		// Five units taken at one per second: full again 5 s after them.
		reset := st.DurationUntilReset.AsDuration()
		switch {
		case b.mini != nil && reset != 5*time.Second:
			t.Errorf("duration_until_reset %v, want 5s (the clock stands still)", reset)
		case reset > 5*time.Second || reset < 5*time.Second-time.Since(start):
			t.Errorf("duration_until_reset %v, want 5s less the time since the first request", reset)
		}
		if got := headerMap(t, res)["Retry-After"]; got != "1" {
			t.Errorf("Retry-After %q, want 1 (one unit back in a second)", got)
		}
		if b.mini != nil {
			b.mini.SetTime(time.Date(2026, 1, 2, 10, 0, 32, 0, time.UTC))
			same(t, "two seconds later", summary(ask(t, c, hits(desc("k", "v"), 2))), []any{ok, ok, uint32(0)})
		}
	})
}

// TestLeasedGlobal sends a leased descriptor that every request shares
// more than its limit, one by one, for longer than its pool waits between
// takes (a tenth of the lease): it admits exactly its limit, though its
// units are taken from the store ahead, in leases.
func TestLeasedGlobal(t *testing.T) {
	const src = "domain: edge\ndescriptors:\n  - key: global\n    rate_limit: {unit: hour, requests_per_unit: 20, lease: 1s}\n"
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, src, rls.Options{})
		admitted := 0
		for range 40 {
			res := ask(t, c, desc("global", "all"))
			if res.OverallCode == ok {
				admitted++
			}
			// Redis's clock stands at 10:00:30; the pool's figures age on
			// the local clock.
			if reset := res.Statuses[0].DurationUntilReset.AsDuration(); b.mini != nil && (reset > 59*time.Minute+30*time.Second || reset < 59*time.Minute+29*time.Second) {
				t.Fatalf("duration_until_reset %v, want 59m30s less the time since the pool's take", reset)
			}
			time.Sleep(15 * time.Millisecond)
		}
		if admitted != 20 {
			t.Errorf("admitted %d, want exactly 20", admitted)
		}
	})
}
