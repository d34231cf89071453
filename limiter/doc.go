// Package limiter decides rate limits for any kind of request (HTTP, gRPC,
// job workers) against a Store: Redis (package redisstore), or the
// in-process memstore. The middleware package is a thin HTTP layer over
// it.
//
// A Limiter holds named rules. Each call to Decide checks a stack of rules,
// each Check naming its rule, for given identities in one store call (one
// Lua script run on Redis: one round trip), all-or-nothing, so a request
// denied by one rule consumes nothing of the others. Allow is Decide for
// one rule at cost 1. By default the Redis store reads the server's TIME,
// so every app server decides on one clock.
//
// The package holds the decision API and what protects callers from a
// Remote store's failures: the breaker that marks a store down
// (WithRetryInterval, WithFallback) and the deny cache (WithDenyCache).
// Stores implement Store; they know nothing of rules, only of keys.
//
// # Keys
//
// A rule's state for an identity lives under
//
//	<prefix>:{<rule>:<identity>}:<algorithm code>[<parameters>]
//
// (the windows and the log add their window in µs, a concurrency limit its
// lease, the buckets their capacity, rate and period: the parameters their
// stored state depends on, ratelimit:{per-ip:203.0.113.9}:sw60000000,
// ratelimit:{per-key:…}:tb10-5-1000000). The
// braces are a Redis Cluster hash tag, so one rule and identity always
// map to one slot. Identities are untrusted: one that is empty is an error,
// and one longer than 64 bytes or with a byte outside [A-Za-z0-9._:@/+=-] is
// replaced by "#" and the hex of the first 16 bytes of its SHA-256, so no
// identity can end the hash tag, collide with another, or make a key long.
// Rule names are restricted to [A-Za-z0-9._-].
//
// # Plans
//
// A Check may carry a Plan, an algorithm in place of its rule's: the limit
// of a customer's plan. When a client's plan changes, its state carries over where the
// new limit can read it: counts in the same window (fixed and sliding
// windows, sliding log, concurrency leases: an upgrade from 2 to 5 an hour
// admits 3 more at once, a downgrade admits nothing until the counts
// fall), GCRA's debt and a queue's tail, which are time (a spent hour at 2
// an hour is a spent hour at 5 an hour). A limit with another window or
// lease, and a bucket with any other capacity, rate or period, keeps its
// state under other keys and starts afresh, since the stored state (or, for
// a bucket, what its give-backs may return) depends on it: a short window
// never trims a long one's log, and switching back finds the first
// state as it was. The deny cache keys on the limit too.
//
// # Settlement
//
// Settle gives back what a decision did not use, at most once per
// decision (a second Settle returns ErrSettled; Wait's give-back counts).
// A give-back never returns more than a decision of the final cost at the
// original instant would have left, whatever happened in between. The
// windows and the log give back exactly: their counts add up. The rules
// whose state drains (the buckets, GCRA, a queue) give back what is left
// of the decision's own share: its level just after the decision, drained
// since, less what decisions made before it gave back since; that is the
// whole difference when the state has not emptied since (a reservation
// settled at the end of a response), and nothing once the bucket has
// refilled past it (10 taken from a bucket of 10, 10 more after it
// refilled, then the first settled at 0: nothing back, where subtracting
// from the current level let 10 more in at once). Such a key keeps a
// ledger of its give-backs (three integers) from the first give-back until
// no decision's share can matter any more.
package limiter
