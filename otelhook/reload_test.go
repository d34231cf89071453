package otelhook_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/otelhook"
)

// Reloads of a rules file are counted by result: a changed valid file is
// ok, an invalid one an error.
func TestReloadsCounted(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	rec, err := otelhook.New(otelhook.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	write := func(data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("rules:\n  - name: per-ip\n    key: ip\n    gcra: 10/s\nstacks:\n  - name: api\n    rules: [per-ip]\n")
	limits, err := config.Load(path, memstore.Must(), config.WithReloadHook(rec.Reload))
	if err != nil {
		t.Fatal(err)
	}
	defer limits.Close()
	write("rules:\n  - name: per-ip\n    key: ip\n    gcra: 20/s\nstacks:\n  - name: api\n    rules: [per-ip]\n")
	if err := limits.Reload(); err != nil {
		t.Fatal(err)
	}
	write("rules: [")
	if err := limits.Reload(); err == nil {
		t.Fatal("an invalid file reloaded")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "ratelimit.config.reloads" {
				for _, p := range sum.DataPoints {
					v, _ := p.Attributes.Value("result")
					got[v.AsString()] = p.Value
				}
			}
		}
	}
	if got["ok"] != 1 || got["error"] != 1 {
		t.Errorf("reloads %v, want ok 1 and error 1", got)
	}
}
