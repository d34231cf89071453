// Package algorithms defines the eight rate-limiting algorithms as plain
// value types (fixed window, sliding log, sliding window counter, token
// bucket, leaky bucket, GCRA, queue and concurrency), and the Result of a
// decision.
//
// The types carry configuration only: they hold no state and do no I/O. A
// store keeps the state and applies the semantics written on each type:
// the Redis scripts in package lua (package redisstore runs them), or the
// exact Go models of each algorithm that the in-process memstore runs and
// the Lua scripts are tested against. Every type has
// Validate, which names the offending field, and String, which is stable and
// human-readable.
//
// # Units and exactness
//
// Stores work in whole microseconds with integer arithmetic that stays below
// 2^53, so Lua (whose numbers are float64) and Go compute the same results.
// Validate rejects configurations whose products would leave that range.
// Durations in a Result are rounded up to whole milliseconds: a client that
// waits RetryAfter is never early.
//
// # Cost
//
// Every decision has a cost, the weight of the request (1 by default). A
// denied request consumes nothing. A cost of 0 is a peek: it reports the state
// and changes nothing. A cost above what the rule can ever admit (Limit,
// Capacity or Burst) is denied with RetryAfter set to Never and leaves the
// state untouched.
package algorithms
