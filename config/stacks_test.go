package config_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestLeasedRuleSharedByStacks: a leased rule in two stacks has one lease
// pool, so the two stacks together admit exactly its limit, whichever
// stack the requests come through (with a pool per stack, units one stack
// holds are refused to the other's requests).
func TestLeasedRuleSharedByStacks(t *testing.T) {
	now := time.Date(2245, 6, 1, 10, 0, 0, 0, time.UTC)
	clock := limiter.WithClock(func() time.Time { return now })
	for i, s := range stores(t) {
		t.Run(s.name, func(t *testing.T) {
			limits, _ := load(t, s.store, fmt.Sprintf(`prefix: shared%d
rules:
  - name: pool
    key: {constant: all}
    fixed_window: 100/1h
    lease: 1s
stacks:
  - name: a
    rules: [pool]
  - name: b
    rules: [pool]
`, i), config.WithLimiterOptions(clock))
			ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
			admitted := func(stack string, n int) (got int) {
				h := limits.Middleware(stack)(ok)
				for range n {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
					if w.Code == http.StatusOK {
						got++
					}
				}
				return got
			}
			// 30 through a, then only through b, every 140 ms: within the
			// lease of 1 s, so nothing a's requests leased would come back
			// to the store by then. Leases pace the last units (a short
			// take waits a tenth of the lease), so b takes six steps.
			got := admitted("a", 30)
			for range 6 {
				now = now.Add(140 * time.Millisecond)
				got += admitted("b", 30)
			}
			if got != 100 {
				t.Errorf("%d admitted through a then b, want the limit, 100", got)
			}
			now = now.Add(140 * time.Millisecond)
			if more := admitted("a", 10) + admitted("b", 10); more != 0 {
				t.Errorf("%d more admitted past the limit", more)
			}
		})
	}
}
