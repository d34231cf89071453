// Package limiter decides rate limits for any kind of request (HTTP, gRPC,
// job workers) against Redis. The middleware package is a thin HTTP layer
// over it.
//
// A Limiter holds named rules. Each call to Decide checks a stack of rules,
// each Check naming its rule, for given identities in one Lua script run:
// one round trip to Redis, and all-or-nothing, so a request denied by one
// rule consumes nothing of the others. Allow is Decide for one rule at
// cost 1. By default the script reads the Redis server's TIME, so every app
// server decides on one clock.
//
// # Keys
//
// A rule's state for an identity lives under
//
//	<prefix>:{<rule>:<identity>}:<algorithm code>
//
// The braces are a Redis Cluster hash tag, so one rule and identity always
// map to one slot. Identities are untrusted: one that is empty is an error,
// and one longer than 64 bytes or with a byte outside [A-Za-z0-9._:@/+=-] is
// replaced by "#" and the hex of the first 16 bytes of its SHA-256, so no
// identity can end the hash tag, collide with another, or make a key long.
// Rule names are restricted to [A-Za-z0-9._-].
package limiter
