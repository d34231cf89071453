// Package ratelimit is the root of a Redis-backed rate limiter for Go HTTP
// services. It holds only ErrConfig, which every package's construction
// errors wrap; the code lives in its packages:
//
//   - middleware: func(http.Handler) http.Handler rate limiting for net/http and chi
//   - limiter: the decision API for anything that is not HTTP, over a Store
//   - redisstore: the Store on Redis (any go-redis client kind)
//   - memstore: an in-process store, for single instances, tests and fallback
//   - algorithms: the eight algorithms as value types, and the Result type
//   - keyfunc: identities from requests (client IP, API key, user, route)
//   - headers: X-RateLimit-*, Retry-After and the IETF RateLimit fields
//   - client: an http.RoundTripper that obeys those headers
//   - lua: the Lua sources of the atomic Redis scripts (their text, lua.Files,
//     is what the Redis store runs)
//
// See the README for a tour.
package ratelimit
