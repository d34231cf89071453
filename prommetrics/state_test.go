package prommetrics_test

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// TestBackendStateOneAtATime: events of different backend states that
// arrive together (requests decided while Redis flaps) leave exactly one
// state at 1, never two or none.
func TestBackendStateOneAtATime(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := prommetrics.New(reg, prommetrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3000 {
		var start, done sync.WaitGroup
		start.Add(1)
		for _, b := range []guard.Backend{guard.BackendDown, guard.BackendUp, guard.BackendFallback} {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				c.Hook(guard.Event{Outcome: "allowed", Backend: b})
			}()
		}
		start.Done()
		done.Wait()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var on []string
		for _, f := range families {
			if f.GetName() != "ratelimit_backend_state" {
				continue
			}
			for _, m := range f.GetMetric() {
				if m.GetGauge().GetValue() == 1 {
					on = append(on, m.GetLabel()[0].GetValue())
				}
			}
		}
		if len(on) != 1 {
			t.Fatalf("round %d: states at 1: %v, want one", round, on)
		}
	}
}
