package rls_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

const metricsConfig = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: day, requests_per_unit: 10}
  - key: tenant
    rate_limit: {unit: day, requests_per_unit: 5}
  - key: beta
    shadow_mode: true
    rate_limit: {unit: day, requests_per_unit: 2}
`

// metricsOn is a registry with a Server's Metrics on it.
func metricsOn(t *testing.T) (*prometheus.Registry, *rls.Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := rls.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// ruleNames are the rule names of src's limits, in file order.
func ruleNames(t *testing.T, src string) []string {
	t.Helper()
	c, err := rls.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rls.Limits(c) {
		names = append(names, r.Name)
	}
	return names
}

// series are reg's samples by name, then by their label values joined
// with commas: a counter's value, a histogram's count of observations.
func series(t *testing.T, reg *prometheus.Registry) map[string]map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		out[mf.GetName()] = map[string]float64{}
		for _, m := range mf.GetMetric() {
			key := ""
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetValue()
			}
			v := m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
			}
			out[mf.GetName()][key] = v
		}
	}
	return out
}

// count is the number of series in s.
func count(s map[string]map[string]float64) int {
	n := 0
	for _, byLabels := range s {
		n += len(byLabels)
	}
	return n
}

func TestMetricsCounts(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		reg, m := metricsOn(t)
		c := serve(t, b, metricsConfig, rls.Options{Metrics: m})
		ip := func(n uint64) *ratelimitv3.RateLimitDescriptor { return hits(desc("remote_address", "10.0.0.1"), n) }
		tenant := func(n uint64) *ratelimitv3.RateLimitDescriptor { return hits(desc("tenant", "t1"), n) }
		beta := desc("beta", "on")
		steps := []struct {
			ds   []*ratelimitv3.RateLimitDescriptor
			want []any
		}{
			{[]*ratelimitv3.RateLimitDescriptor{ip(7)}, []any{ok, ok, uint32(3)}},                               // within 7
			{[]*ratelimitv3.RateLimitDescriptor{ip(2)}, []any{ok, ok, uint32(1)}},                               // 7 to 9: 1 near (past 8)
			{[]*ratelimitv3.RateLimitDescriptor{ip(3), tenant(4)}, []any{over, over, uint32(0), ok, uint32(5)}}, // 9 to 12: 1 near, 2 over; tenant within 4, none near (up to 4, consuming nothing)
			{[]*ratelimitv3.RateLimitDescriptor{ip(1)}, []any{ok, ok, uint32(0)}},                               // 9 to 10: 1 near
			{[]*ratelimitv3.RateLimitDescriptor{ip(1)}, []any{over, over, uint32(0)}},                           // full: 1 over
			{[]*ratelimitv3.RateLimitDescriptor{tenant(4)}, []any{ok, ok, uint32(1)}},                           // the refusal took nothing: within 4
			{[]*ratelimitv3.RateLimitDescriptor{ip(1), tenant(1)}, []any{over, over, uint32(0), ok, uint32(1)}}, // ip 1 over; tenant 4 to 5 (not consumed): within 1, 1 near
			{[]*ratelimitv3.RateLimitDescriptor{tenant(1)}, []any{ok, ok, uint32(0)}},                           // 4 to 5: 1 near
			{[]*ratelimitv3.RateLimitDescriptor{beta}, []any{ok, ok, uint32(1)}},
			{[]*ratelimitv3.RateLimitDescriptor{beta}, []any{ok, ok, uint32(0)}},   // 1 to 2: 1 near (past 1)
			{[]*ratelimitv3.RateLimitDescriptor{beta}, []any{ok, over, uint32(0)}}, // shadow: 1 over
		}
		for i, s := range steps {
			same(t, "step "+strconv.Itoa(i+1), summary(ask(t, c, s.ds...)), s.want)
		}
		names := ruleNames(t, metricsConfig)
		got := series(t, reg)
		want := map[string][5]float64{ // hits, within, near, over, shadow
			names[0]: {15, 10, 3, 4, 0},
			names[1]: {10, 10, 2, 0, 0},
			names[2]: {3, 2, 1, 1, 1},
		}
		for rule, w := range want {
			for i, name := range []string{"hits_total", "within_limit_total", "near_limit_total", "over_limit_total", "shadow_mode_total"} {
				if v := got["ratelimit_rls_"+name][rule]; v != w[i] {
					t.Errorf("%s{rule=%q} = %v, want %v", name, rule, v, w[i])
				}
			}
		}
		h := got["ratelimit_rls_decision_duration_seconds"]
		if h["ok"] != 8 || h["over_limit"] != 3 || h["error"] != 0 {
			t.Errorf("decisions observed by outcome %v, want ok 8, over_limit 3", h)
		}
		for cause, v := range got["ratelimit_rls_failures_total"] {
			if v != 0 {
				t.Errorf("failures_total{cause=%q} = %v, want 0", cause, v)
			}
		}
	})
}

func TestMetricsReload(t *testing.T) {
	reg, m := metricsOn(t)
	m.Reload(nil)
	m.Reload(nil)
	m.Reload(errors.New("test.yaml:3:5: bad"))
	got := series(t, reg)["ratelimit_rls_config_reloads_total"]
	if got["ok"] != 2 || got["error"] != 1 {
		t.Errorf("reloads %v, want ok 2, error 1", got)
	}
	var none *rls.Metrics
	none.Reload(nil) // records nothing, and does not panic
	if _, err := rls.NewMetrics(reg); err == nil {
		t.Error("registering a second Metrics with one registry: no error")
	}
}

// TestMetricsCardinality sends 1,000 distinct values through a limit, a
// limit override and an unmatched descriptor: no series is added after
// the first request.
func TestMetricsCardinality(t *testing.T) {
	const src = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: day, requests_per_unit: 2000}
  - key: user
    rate_limit: {unit: day, requests_per_unit: 2000}
`
	eachBackend(t, func(t *testing.T, b backend) {
		reg, m := metricsOn(t)
		c := serve(t, b, src, rls.Options{Metrics: m})
		var first int
		for i := range 1000 {
			v := fmt.Sprintf("10.%d.%d.1", i/250, i%250)
			overridden := limited(desc("user", v), uint32(1+i%50), typev3.RateLimitUnit_MINUTE, 0)
			res := ask(t, c, desc("remote_address", v), overridden, desc("unknown", v))
			if res.OverallCode != ok {
				t.Fatalf("request %d: %v", i, res.OverallCode)
			}
			if i == 0 {
				first = count(series(t, reg))
			}
		}
		got := series(t, reg)
		if n := count(got); n != first {
			t.Errorf("%d series after 1,000 distinct values, %d after the first request: %v", n, first, got)
		}
		names := ruleNames(t, src)
		if h := got["ratelimit_rls_hits_total"]; len(h) != 2 || h[names[0]] != 1000 || h[names[1]] != 1000 {
			t.Errorf("hits_total %v, want 1000 for each of %v alone", h, names)
		}
	})
}

// TestMetricsFailures decides on a Redis nothing listens on: each call
// is UNAVAILABLE and counts as a failure of a dial, or of Redis marked
// down, and no hits.
func TestMetricsFailures(t *testing.T) {
	reg, m := metricsOn(t)
	rdb := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	c := serve(t, backend{name: "dead", rdb: rdb}, metricsConfig, rls.Options{Metrics: m, OnError: func(error) {}})
	const calls = 5
	for range calls {
		_, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "10.0.0.1")}})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("got %v, want UNAVAILABLE", err)
		}
	}
	got := series(t, reg)
	f := got["ratelimit_rls_failures_total"]
	if f["refused"] < 1 || f["refused"]+f["unavailable"] != calls {
		t.Errorf("failures by cause %v, want %d, at least the first refused, the others refused or unavailable", f, calls)
	}
	if n := got["ratelimit_rls_decision_duration_seconds"]["error"]; n != calls {
		t.Errorf("%v decisions observed as error, want %d", n, calls)
	}
	if h := got["ratelimit_rls_hits_total"]; len(h) != 0 {
		t.Errorf("hits_total %v after failed decisions, want none", h)
	}
}

// TestShadowModeCountsTheHitsOver: shadow_mode_total counts, as the
// reference's shadow_mode stat, the hits a shadow_mode limit's request
// took beyond the limit, the same as over_limit_total: a limit of 2 at
// 1 used, asked for 3, counts 2 (3 and 4), not the 3 hits.
func TestShadowModeCountsTheHitsOver(t *testing.T) {
	reg, m := metricsOn(t)
	c := serve(t, miniBackend(t), metricsConfig, rls.Options{Metrics: m})
	same(t, "within", summary(ask(t, c, desc("beta", "b"))), []any{ok, ok, uint32(1)})
	same(t, "over", summary(ask(t, c, hits(desc("beta", "b"), 3))), []any{ok, over, uint32(0)})
	same(t, "full", summary(ask(t, c, hits(desc("beta", "b"), 2))), []any{ok, over, uint32(0)})
	rule := ruleNames(t, metricsConfig)[2]
	got := series(t, reg)
	// 1, then 3 (2 over), then 2 (1 over: the refusals consumed nothing,
	// the window holds 1 of 2).
	for name, want := range map[string]float64{"hits_total": 6, "over_limit_total": 3, "shadow_mode_total": 3} {
		if v := got["ratelimit_rls_"+name][rule]; v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
}
