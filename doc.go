// Package ratelimit is the root of a Redis-backed rate limiter for Go HTTP
// services. The code lives in its packages:
//
//   - middleware: func(http.Handler) http.Handler rate limiting for net/http and chi
//   - limiter: the decision API for anything that is not HTTP
//   - algorithms: the six algorithms as value types, and the Result type
//   - keyfunc: identities from requests (client IP, API key, user, route)
//   - headers: X-RateLimit-*, Retry-After and the IETF RateLimit fields
//   - lua: the atomic Redis scripts
//
// See the README for a tour.
package ratelimit
