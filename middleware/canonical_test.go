package middleware

import (
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/headers"
)

func TestCanonical(t *testing.T) {
	want := headers.Names{Limit: "X-Ratelimit-Limit", Remaining: "X-Ratelimit-Remaining", Reset: "X-Ratelimit-Reset",
		RetryAfter: "Retry-After", Policy: "Ratelimit-Policy", RateLimit: "Ratelimit"}
	if got := canonical(headers.Both); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := canonical(headers.Names{Limit: "x-my-limit"}); got != (headers.Names{Limit: "X-My-Limit"}) {
		t.Errorf("got %+v, want only Limit, canonical", got)
	}
}
