package prommetrics_test

import (
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
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, f := range families {
		if f.GetName() != "ratelimit_decisions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" {
					routes = append(routes, l.GetValue())
				}
			}
		}
	}
	if len(routes) != 1 || routes[0] != "/x\uFFFD/y" {
		t.Errorf("routes %q, want [\"/x\\uFFFD/y\"]", routes)
	}
}
