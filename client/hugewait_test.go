package client_test

import (
	"net/http"
	"testing"
)

// A wait too long to count in nanoseconds (more than about 292 years) is
// a wait past any MaxWait, not a negative one: the refusal is returned and
// the request is not sent again at once, nor are the requests after it.
func TestHugeWaitIsNotNegative(t *testing.T) {
	for _, retryAfter := range []string{"10000000000", "18446744073", "99999999999999999", "99999999999999999999"} {
		t.Run(retryAfter, func(t *testing.T) {
			url, sends := refusing(t, retryAfter)
			clk := newFakeClock()
			c := &http.Client{Transport: clk.transport()}
			res, err := c.Get(url)
			if err != nil || res.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("%v %v, want the 429", res, err)
			}
			res.Body.Close()
			if n := sends.Load(); n != 1 {
				t.Errorf("Retry-After: %s: %d sends, want 1", retryAfter, n)
			}
			if res, err := c.Get(url); err == nil {
				res.Body.Close()
				t.Errorf("Retry-After: %s: the next request was sent (%d sends), want it held", retryAfter, sends.Load())
			}
		})
	}
}
