// Package redisconn is the Redis client of grpclimit's examples: Redis at
// REDIS_URL, or an in-process miniredis when it is not set.
package redisconn

import (
	"os"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Connect is a client of Redis at REDIS_URL, or of an in-process
// miniredis.
func Connect() (*redis.Client, error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opt), nil
	}
	srv, err := miniredis.Run()
	if err != nil {
		return nil, err
	}
	return redis.NewClient(&redis.Options{Addr: srv.Addr()}), nil
}
