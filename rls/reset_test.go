package rls_test

import (
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// TestDurationUntilResetWholeSeconds: duration_until_reset is whole
// seconds, rounded up, as the reference sends it (Envoy reads its seconds
// alone): a fixed window 29.6 s from its end says 30 s, a token bucket
// full again in 0.1 s says 1 s. On a redis-server, whose clock runs,
// every duration is whole and at least 1 s.
func TestDurationUntilResetWholeSeconds(t *testing.T) {
	const src = "domain: edge\ndescriptors:\n" +
		"  - key: fixed\n    rate_limit: {unit: minute, requests_per_unit: 5}\n" +
		"  - key: bucket\n    rate_limit: {unit: second, requests_per_unit: 10, algorithm: token_bucket}\n"
	eachBackend(t, func(t *testing.T, b backend) {
		if b.mini != nil {
			b.mini.SetTime(time.Date(2026, 1, 2, 10, 0, 30, 400_000_000, time.UTC))
		}
		c := serve(t, b, src, rls.Options{})
		res := ask(t, c, desc("fixed", "v"), desc("bucket", "v"))
		for i, want := range []time.Duration{30 * time.Second, time.Second} {
			d := res.Statuses[i].DurationUntilReset
			switch {
			case d.GetNanos() != 0 || d.GetSeconds() < 1:
				t.Errorf("status %d: duration_until_reset %v, want whole seconds, at least 1", i, d.AsDuration())
			case b.mini != nil && d.AsDuration() != want:
				t.Errorf("status %d: duration_until_reset %v, want %v (rounded up)", i, d.AsDuration(), want)
			}
		}
	})
}
