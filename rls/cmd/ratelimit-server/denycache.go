package main

import (
	"fmt"
	"strconv"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// denyEntryBytes is what one entry of the limiter's deny cache counts for
// against LOCAL_CACHE_SIZE_IN_BYTES: a denied request of one descriptor
// takes about 450 bytes of heap (its key, its denial, its rule's result
// and the map's room, measured over 20,000 denials), and each more
// descriptor about 220 more.
const denyEntryBytes = 512

// denyEntries reads LOCAL_CACHE_SIZE_IN_BYTES, the reference's local
// cache of refused keys, as how many denials the limiter's deny cache
// keeps: one per denyEntryBytes, at least one; 0 or unset keeps it off,
// as in the reference.
func denyEntries(getenv func(string) string) (int, error) {
	v := getenv("LOCAL_CACHE_SIZE_IN_BYTES")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("ratelimit: LOCAL_CACHE_SIZE_IN_BYTES %q: want a number of bytes", v)
	}
	if n == 0 {
		return 0, nil
	}
	return max(1, n/denyEntryBytes), nil
}

// limiterOptions are the options of every limiter the server builds: the
// deny cache of LOCAL_CACHE_SIZE_IN_BYTES, each denial trusted for at
// most the limiter's default of 1 s (the reference trusts one until its
// window ends), and the keys' prefix of CACHE_KEY_PREFIX.
func (s settings) limiterOptions() []limiter.Option {
	opts := []limiter.Option{limiter.WithDenyCache(s.denyEntries, 0)}
	if s.keyPrefix != "" {
		opts = append(opts, limiter.WithPrefix(s.keyPrefix))
	}
	return opts
}
