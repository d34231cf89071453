package limiter_test

import "github.com/seed-bff0c9e1/ratelimit/redisstore"

// mustStore is a store from redisstore.New, or a panic.
func mustStore(s *redisstore.Store, err error) *redisstore.Store {
	if err != nil {
		panic(err)
	}
	return s
}
