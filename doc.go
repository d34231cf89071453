// Package ratelimit is the root of a Redis-backed rate limiter for Go HTTP
// services. It holds only ErrConfig, which every package's construction
// errors wrap; the code lives in its packages:
//
//   - middleware: func(http.Handler) http.Handler rate limiting for net/http and chi
//   - limiter: the decision API for anything that is not HTTP, and the Redis store
//   - memstore: an in-process store, for single instances, tests and fallback
//   - algorithms: the six algorithms as value types, and the Result type
//   - keyfunc: identities from requests (client IP, API key, user, route)
//   - headers: X-RateLimit-*, Retry-After and the IETF RateLimit fields
//   - client: an http.RoundTripper that obeys those headers
//   - lua: the Lua sources of the atomic Redis scripts
//
// See the README for a tour.
package ratelimit
