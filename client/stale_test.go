package client_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// A refusal read after the response to a later request (two requests in
// flight at once, the first answered last) is retried no sooner than its
// Retry-After says, even though the later response reported quota left.
func TestLateRefusalIsRetriedAfterItsWait(t *testing.T) {
	clk := newFakeClock()
	aSent, bDone := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var refusedAt, retriedAt time.Time
	aSends := 0
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		res := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
		if r.URL.Path == "/b" {
			res.Header.Set("RateLimit", `"all";r=5;t=1`)
			return res, nil
		}
		mu.Lock()
		defer mu.Unlock()
		aSends++
		if aSends > 1 {
			retriedAt = clk.Now()
			return res, nil
		}
		close(aSent)
		mu.Unlock()
		<-bDone // answered after b's response was read
		mu.Lock()
		refusedAt = clk.Now()
		res.StatusCode = http.StatusTooManyRequests
		res.Header.Set("Retry-After", "5")
		return res, nil
	})}
	client.SetClock(tr, clk.Now, clk.Sleep)
	c := &http.Client{Transport: tr}
	done := make(chan *http.Response)
	go func() {
		res, err := c.Get("http://api.test/a")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-aSent
	res, err := c.Get("http://api.test/b")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	close(bDone)
	if res := <-done; res == nil || res.StatusCode != http.StatusOK {
		t.Fatalf("a: %v, want the retry's 200", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if waited := retriedAt.Sub(refusedAt); waited < 5*time.Second {
		t.Errorf("a's retry went %v after its refusal, want Retry-After's 5s or more", waited)
	}
}
