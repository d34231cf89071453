// Package lua holds the Redis Lua sources that decide rate limits: one
// readable file per algorithm (fixed_window.lua, sliding_log.lua,
// sliding_window.lua, token_bucket.lua, leaky_bucket.lua, gcra.lua: its
// decision, commit and refund, and queue.lua), helper files (lib.lua
// always; state.lua, verdict.lua, ledger.lua (the bound on refunds of
// the rules whose state drains) and meter.lua for the algorithms that use
// them; decide.lua, the decision of one stack, for the drivers that
// decide; batches.lua, the decision of several stacks, for the batch
// drivers; mark.lua, a block or a Reset's mark, for block.lua and
// delete.lua), and six drivers: stack.lua decides a stack of rules
// all-or-nothing, batch.lua decides several stacks in one run (the
// decisions a client coalesced) and slots.lua those of several hash slots
// of one Redis Cluster node (both functions of the library only),
// refund.lua refunds all or part of a decision's consumption (after
// refund_mode.lua), block.lua blocks a client for a rule, delete.lua
// forgets a client's keys (and leaves a Reset's mark when it forgot any).
//
// Each file opens with a comment naming its KEYS, ARGV and reply. The files
// are not scripts on their own: the Redis store (package redisstore)
// assembles, for each set of algorithms a stack uses, one script of the
// helpers, those algorithms and a driver, and runs it with EVALSHA (EVAL
// after NOSCRIPT), or loads them all as one library of Redis functions. To read or run
// the script for a set:
//
//	go run ./internal/cmd/luascript gc fw > /tmp/stack.lua
//	redis-cli --eval /tmp/stack.lua ratelimit:{demo:me}:gce , '' 1 gc:5:1000000:10 1 '' ''
package lua

import "embed"

// Files are the Lua sources, embedded: what the Redis store runs, exported
// because Go embeds files only from a package's own directory and the
// sources live here, where a reader finds them.
//
//go:embed *.lua
var Files embed.FS
