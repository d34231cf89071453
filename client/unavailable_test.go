package client_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A 503 is a refusal to retry only when its Retry-After says how long to
// wait: one whose Retry-After is neither seconds nor an HTTP date says
// nothing of when the server is back, and is returned as it is, not sent
// again at once.
func TestUnavailableWithoutAWaitIsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		sends      int64
	}{
		{"soon", 1},
		{"Wed, 31 Febtember 2026", 1},
		{"1.5", 1},
		{"0", 3}, // a wait of none: retried at once, up to MaxAttempts
	} {
		var sends atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			w.Header().Set("Retry-After", tc.retryAfter)
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		clk := newFakeClock()
		res, err := (&http.Client{Transport: clk.transport()}).Get(srv.URL)
		if err != nil || res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("Retry-After %q: %v %v, want the 503", tc.retryAfter, res, err)
		}
		res.Body.Close()
		if n := sends.Load(); n != tc.sends {
			t.Errorf("503 with Retry-After %q: %d sends, want %d", tc.retryAfter, n, tc.sends)
		}
		srv.Close()
	}
}
