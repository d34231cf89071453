package demo

import (
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestRedisTimeout(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { rdb.Close() })
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"", true}, {"250ms", true}, {"soon", false}, {"-1s", false}} {
		t.Setenv("REDIS_TIMEOUT", tc.value)
		_, err := NewLimits(rdb)
		if tc.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "REDIS_TIMEOUT") {
			t.Errorf("REDIS_TIMEOUT=%q: %v", tc.value, err)
		}
	}
}
