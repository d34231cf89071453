package main

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisPingEvery is how often the server pings Redis for its health under
// REDIS_HEALTH_CHECK_ACTIVE_CONNECTION; each ping waits at most as long.
const redisPingEvery = time.Second

// watchRedis pings rdb at once, then every interval, until ctx is done,
// and tells up whether Redis answered, at the first ping and at each
// change: the server is unhealthy while it does not, as the reference's
// is while it holds no connection to Redis.
func watchRedis(ctx context.Context, rdb redis.UniversalClient, interval time.Duration, up func(bool)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	first, last := true, false
	for {
		pinged, cancel := context.WithTimeout(ctx, interval)
		ok := rdb.Ping(pinged).Err() == nil
		cancel()
		if ctx.Err() != nil {
			return
		}
		if first || ok != last {
			up(ok)
			first, last = false, ok
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
