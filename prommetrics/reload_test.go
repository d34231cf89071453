package prommetrics_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/prommetrics"
)

// Reloads of a rules file are counted by result: a changed valid file is
// ok, an invalid one an error.
func TestReloadsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := prommetrics.New(reg, prommetrics.Options{})
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
	limits, err := config.Load(path, memstore.Must(), config.WithReloadHook(c.Reload))
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
	got := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "ratelimit_config_reloads_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if got["ok"] != 1 || got["error"] != 1 {
		t.Errorf("reloads %v, want ok 1 and error 1", got)
	}
}
