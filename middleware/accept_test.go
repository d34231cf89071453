package middleware_test

import (
	"net/http"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// A refusal is JSON only for a client that accepts JSON: a weight of 0
// refuses a media type however it is written ("0", "0.0", "0.000"; RFC
// 9110, 12.4.2), and any other weight accepts it.
func TestRefusalHonoursZeroWeights(t *testing.T) {
	h := mwtest.New(t, memstore.Must(), []middleware.Rule{perIP(1)})(ok)
	do(h, "GET", "/", "203.0.113.9:1")
	for accept, want := range map[string]string{
		"application/json;q=0, text/plain":         "text/plain; charset=utf-8",
		"application/json;q=0.0, text/plain":       "text/plain; charset=utf-8",
		"application/json; q=0.000, text/plain":    "text/plain; charset=utf-8",
		"application/json;q=0.001, text/plain":     "application/problem+json",
		"text/plain, application/problem+json;q=1": "application/problem+json",
	} {
		res := do(h, "GET", "/", "203.0.113.9:1", "Accept", accept)
		if got := res.Header.Get("Content-Type"); res.StatusCode != http.StatusTooManyRequests || got != want {
			t.Errorf("Accept %q: %d %s, want 429 %s", accept, res.StatusCode, got, want)
		}
	}
}
