// Package envoy is the reference server's configuration format: the YAML
// files of Envoy's rate limit service (envoyproxy/ratelimit), one domain
// each, parsed by Parse and LoadDir with every problem at its
// file:line:column (a config.Problem), with this library's additions (a
// rate_limit's algorithm, window, burst and lease; see docs/envoy.md).
// Limits gives the limiter rules of a configuration; Match finds the
// limit of a descriptor's entries. The service that answers Envoy from
// it, on a limiter.Limiter, is the rls module's.
package envoy
