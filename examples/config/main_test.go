package main

import (
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/examples/internal/demotest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestExample: the file's limits behave as the chi and stdlib examples'
// Go rules do (the same checks).
func TestExample(t *testing.T) {
	demotest.Run(t, func(rdb redis.Scripter, opts ...limiter.Option) (http.Handler, error) {
		h, limits, err := newHandler(rdb, "ratelimit.yaml", opts...)
		if err == nil {
			t.Cleanup(func() { limits.Close() })
		}
		return h, err
	})
}
