package limiter_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/internal/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestMemoryPerKey measures Redis memory per key for each algorithm over
// 100,000 identities (INFO memory, used_memory before and after). It is a
// measurement, not a check: run it with RATELIMIT_MEMORY=1 -v.
func TestMemoryPerKey(t *testing.T) {
	if os.Getenv("RATELIMIT_MEMORY") != "1" {
		t.Skip("set RATELIMIT_MEMORY=1 to measure memory per key")
	}
	const n = 100_000
	s := redistest.Start(t)
	for _, r := range ruletest.Six(10) {
		if err := s.Client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		before := redistest.UsedMemory(t, s.Client)
		lim, err := limiter.New(s.Client, []limiter.Rule{r}, fixedClock(bases[0]))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for id := g; id < n; id += 32 {
					if _, err := lim.Allow(ctx, "10.0."+strconv.Itoa(id)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		after := redistest.UsedMemory(t, s.Client)
		keys := s.Client.DBSize(ctx).Val()
		t.Logf("%-2s %-36s keys=%d bytes/key=%.0f", r.Name, fmt.Sprint(r.Algorithm), keys, float64(after-before)/float64(keys))
	}
}
