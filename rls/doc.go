// Package rls serves Envoy's Rate Limit Service (RLS v3,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) on a
// limiter.Limiter: a door for Envoy and the proxies built on it, beside
// the HTTP middleware and the gRPC interceptors.
//
// Its configuration is the reference server's (envoyproxy/ratelimit)
// format, parsed by Parse with every problem at its file:line:column
// (package config/envoy of the library, which Parse, LoadDir,
// LoadDirMerged, Limits and Dump call, and whose Config is this
// package's).
// Each configured limit becomes a limiter rule (a fixed window aligned to
// its unit, as the reference counts, unless its rate_limit names another
// algorithm, window or lease: see docs/envoy.md), and Limits gives them
// for building the Limiter. Or its configuration is the library's own
// rules file (package config), whose stacks with a domain FromFile serves
// on the file's limiter, through its reloads, beside its HTTP and gRPC
// stacks. A Server answers each request with one all-or-nothing
// decision over all its descriptors, in one Redis round trip: a
// descriptor over its limit consumes nothing of the others. docs/envoy.md
// says what it does and does not do, variable by variable.
package rls
