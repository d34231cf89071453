package otelhook_test

import (
	"context"
	"sync"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/otelhook"
)

// TestBackendStateOneAtATime: events of different backend states that
// arrive together (requests decided while Redis flaps) leave exactly one
// state at 1, never two or none.
func TestBackendStateOneAtATime(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	rec, err := otelhook.New(otelhook.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider()})
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
				rec.Hook(guard.Event{Outcome: "allowed", Backend: b})
			}()
		}
		start.Done()
		done.Wait()
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		var on []string
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "ratelimit.backend.state" {
					for _, p := range g.DataPoints {
						if p.Value == 1 {
							v, _ := p.Attributes.Value("state")
							on = append(on, v.AsString())
						}
					}
				}
			}
		}
		if len(on) != 1 {
			t.Fatalf("round %d: states at 1: %v, want one", round, on)
		}
	}
}
