package lease

import (
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
)

// A lease of a window lasts its Lease, and no further than the end of the
// window its units were counted in (the token's stamp is that window's
// start, in µs), at large timestamps too; a bucket's lasts its Lease.
func TestExpiry(t *testing.T) {
	window := Algo{Facts: algo.Facts{Leasable: true, WindowBound: true, Units: true}, Quota: 10, Window: time.Second}
	start := base.UnixMicro()
	for _, tc := range []struct {
		name string
		a    *Algo
		at   time.Duration // since the window's start
		want time.Duration
	}{
		{"window, early", &window, 100 * ms, 500 * ms},
		{"window, late", &window, 700 * ms, 300 * ms},
		{"window, 1 µs left", &window, time.Second - time.Microsecond, time.Microsecond},
		{"bucket", &bucket, 700 * ms, 500 * ms},
	} {
		if got := expiry(tc.a, start, base.Add(tc.at), 500*ms); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
