// Package ratelimit is the root of a Redis-backed rate limiter for Go HTTP
// and gRPC services. It holds only ErrConfig, which every package's
// construction errors wrap, and ErrNoKey, which a key function that finds
// no identity wraps; the code lives in its packages:
//
//   - middleware: func(http.Handler) http.Handler rate limiting for net/http and chi
//   - grpclimit (a module of its own): gRPC interceptors on the same rules
//   - guard: the request layer under both: rules of a request type, Decide,
//     Finish, events
//   - limiter: the decision API under guard, and for callers without a door
//     (job workers), over a Store
//   - redisstore: the Store on Redis (any go-redis client kind)
//   - memstore: an in-process store, for single instances, tests and fallback
//   - algorithms: the eight algorithms as value types, and the Result type
//   - keyfunc: identities from HTTP requests (client IP, API key, user, route)
//   - headers: X-RateLimit-*, Retry-After and the IETF RateLimit fields
//   - client: an http.RoundTripper that obeys those headers
//   - lua: the Lua sources of the atomic Redis scripts (their text, lua.Files,
//     is what the Redis store runs)
//
// See the README for a tour.
package ratelimit
