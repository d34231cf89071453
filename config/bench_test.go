package config_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// thousandRules is a file of 1,000 rules (the algorithms in turn, keys of
// every kind), in 100 stacks of 10, whose limits grow with v.
func thousandRules(v int) string {
	algs := []string{"fixed_window: %d/1m", "sliding_window: %d/1m", "sliding_log: %d/1m", "token_bucket: %d/s burst 20000",
		"leaky_bucket: %d/s burst 20000", "gcra: %d/s burst 20000", "queue: %d/s max_delay 1s", "concurrency: %d ttl 30s"}
	keys := []string{"ip", "route", "{header: X-API-Key}", "{constant: all}", "{form: user}", "{join: [ip, {header: X-Tenant}]}"}
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - name: rule-%d\n    key: %s\n    %s\n", i, keys[i%len(keys)], fmt.Sprintf(algs[i%len(algs)], 100+v+i))
	}
	b.WriteString("stacks:\n")
	for s := range 100 {
		fmt.Fprintf(&b, "  - name: stack-%d\n    match: [\"/s%d/\"]\n    rules: [", s, s)
		for i := range 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "rule-%d", s*10+i)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// BenchmarkReload1000Rules: one Reload of a changed file of 1,000 rules
// in 100 stacks: read, parse, validate, build the limiter and the
// middlewares, swap, close the old limiter.
func BenchmarkReload1000Rules(b *testing.B) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler)) // a line per reload
	path := filepath.Join(b.TempDir(), "rules.yaml")
	versions := [2][]byte{[]byte(thousandRules(0)), []byte(thousandRules(1))}
	if err := os.WriteFile(path, versions[0], 0o644); err != nil {
		b.Fatal(err)
	}
	limits, err := config.Load(path, memstore.Must())
	if err != nil {
		b.Fatal(err)
	}
	defer limits.Close()
	b.SetBytes(int64(len(versions[0])))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if err := os.WriteFile(path, versions[(i+1)%2], 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := limits.Reload(); err != nil {
			b.Fatal(err)
		}
	}
}
