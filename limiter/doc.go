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
//	<prefix>:{<rule>:<identity>}:<algorithm code>[<window or period in µs>]
//
// (the fixed and sliding windows and the buckets add the parameter their
// stored state depends on: ratelimit:{per-ip:203.0.113.9}:sw60000000). The
// braces are a Redis Cluster hash tag, so one rule and identity always
// map to one slot. Identities are untrusted: one that is empty is an error,
// and one longer than 64 bytes or with a byte outside [A-Za-z0-9._:@/+=-] is
// replaced by "#" and the hex of the first 16 bytes of its SHA-256, so no
// identity can end the hash tag, collide with another, or make a key long.
// Rule names are restricted to [A-Za-z0-9._-].
//
// # Limits per request
//
// A Check may carry its own Algorithm (a customer's plan) in place of its
// rule's. When a client's limit changes, its state carries over where the
// new limit can read it: counts in the same window (fixed and sliding
// windows, sliding log: an upgrade from 2 to 5 an hour admits 3 more at
// once, a downgrade admits nothing until the counts fall), a leaky
// bucket's level and a token bucket's tokens with the same period (tokens
// carry over: an empty bucket stays empty and refills at the new rate),
// GCRA's debt, which is time (a spent hour at 2 an hour is a spent hour at
// 5 an hour). A limit with another window or period keeps its state under
// other keys and starts afresh, since the stored state depends on it. The
// deny cache keys on the limit too.
package limiter
