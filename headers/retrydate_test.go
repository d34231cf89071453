package headers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestWriteKeepsAnOuterRetryDate: an outer limiter's Retry-After written
// as an HTTP date (RFC 9110 allows either form) is a wait too, counted
// from the decision's instant. The longer wait is kept, in seconds, so a
// client that obeys the field is refused by neither limiter; a date that
// has passed (or cannot be read) leaves this decision's wait.
func TestWriteKeepsAnOuterRetryDate(t *testing.T) {
	denied := result("inner", 10, time.Minute, algorithms.Result{RetryAfter: 30 * time.Second, ResetAfter: time.Minute})
	for _, tc := range []struct {
		outer, want string
	}{
		{now.Add(2 * time.Minute).UTC().Format(http.TimeFormat), "120"},
		{now.Add(90*time.Second + 500*time.Millisecond).UTC().Format(http.TimeFormat), "90"}, // the format has whole seconds
		{now.Add(10 * time.Second).UTC().Format(http.TimeFormat), "30"},
		{now.Add(-time.Hour).UTC().Format(http.TimeFormat), "30"},
		{"Tuesday, never", "30"},
		{"600", "600"},
	} {
		h := http.Header{}
		h.Set("Retry-After", tc.outer)
		headers.XRateLimit.Write(h, limiter.Decision{At: now, Results: []limiter.RuleResult{denied}})
		if got := h.Values("Retry-After"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("outer Retry-After %q: got %q, want %q", tc.outer, got, tc.want)
		}
	}
}
