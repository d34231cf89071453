package parse

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestLeasableIsTheLimiters: the algorithms a problem with a lease names
// as allowed are exactly those the limiter leases.
func TestLeasableIsTheLimiters(t *testing.T) {
	values := map[string]string{"fixed_window": "100/1m", "sliding_window": "100/1m", "sliding_log": "5/15m",
		"token_bucket": "100/1m burst 200", "leaky_bucket": "10/s burst 20", "gcra": "5000/s burst 10000",
		"queue": "10/s max_delay 2s", "concurrency": "50 ttl 30s"}
	for _, k := range kinds {
		v, ok := values[k.field]
		if !ok {
			t.Errorf("%s: no value to try", k.field)
			continue
		}
		alg, err := parseKind(k, v)
		if err != nil {
			t.Fatalf("%s: %q: %v", k.field, v, err)
		}
		leased := accepts(limiter.Rule{Name: "r", Algorithm: alg, Lease: time.Second})
		if listed := slices.Contains(leasable, k.field); listed != leased {
			t.Errorf("%s: listed as leasable %v, leased by the limiter %v", k.field, listed, leased)
		}
	}
}
