package prommetrics_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// TestRouteNotUTF8: a route that is not valid UTF-8 (the full method of a
// gRPC call, which a client chooses when the server has an unknown
// service handler: grpclimit reports "/x\xff/y" as it came) is counted
// under the route with its invalid bytes replaced; the hook does not
// panic, which would end the server.
func TestRouteNotUTF8(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := prommetrics.New(reg, prommetrics.Options{RouteLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("the hook panicked: %v", p)
			}
		}()
		c.Hook(guard.Event{Route: "/x\xff/y", Rules: []string{"all"}, Outcome: "allowed", Backend: guard.BackendUp})
	}()
	if routes := routeCounts(t, reg, "ratelimit_decisions_total"); len(routes) != 1 || routes["/x\uFFFD/y"] != 1 {
		t.Errorf("routes %v, want /x\uFFFD/y counted once", routes)
	}
}

// routeCounts are the decisions counted per route label value, in series
// name.
func routeCounts(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" {
					counts[l.GetValue()] += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return counts
}

// TestRoutesBounded: the route label takes at most 1000 distinct values
// of at most 256 bytes, as the package doc says. A gRPC server with an
// unknown-service handler reports whatever full method its clients send:
// 5000 distinct ones (and one of 257 bytes) after the service's own
// routes leave those routes counted under their names, before and after
// the flood, the first 1000 routes kept and every other counted as
// "other", in both series that carry the label.
func TestRoutesBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := prommetrics.New(reg, prommetrics.Options{RouteLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	event := func(route string) guard.Event {
		return guard.Event{Route: route, Rules: []string{"all"}, Outcome: "allowed", Backend: guard.BackendUp}
	}
	own := []string{"/svc.A/Get", "/svc.A/Put", "GET /items/{id}"}
	for _, r := range own {
		c.Hook(event(r))
	}
	c.Hook(event("/" + strings.Repeat("x", 256)))
	const flood = 5000
	for i := range flood {
		c.Hook(event(fmt.Sprintf("/junk.S%d/M", i)))
	}
	for _, r := range own {
		c.Hook(event(r))
	}
	for _, name := range []string{"ratelimit_decisions_total", "ratelimit_decision_duration_seconds"} {
		counts := routeCounts(t, reg, name)
		if len(counts) != 1001 {
			t.Errorf("%s: %d distinct routes, want 1000 and \"other\"", name, len(counts))
		}
		for _, r := range own {
			if counts[r] != 2 {
				t.Errorf("%s: route %q counted %v times, want 2", name, r, counts[r])
			}
		}
		if want := float64(flood + 1 - (1000 - len(own))); counts["other"] != want {
			t.Errorf("%s: \"other\" counted %v times, want %v (the long route, and the flood beyond 1000 routes)", name, counts["other"], want)
		}
	}
}
