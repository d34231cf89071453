// Package lua holds the Redis Lua scripts that decide rate limits, and the
// encoding of their arguments and replies.
//
// There is one readable file per algorithm (fixed_window.lua,
// sliding_log.lua, sliding_window.lua, token_bucket.lua, leaky_bucket.lua,
// gcra.lua), a file of shared helpers (lib.lua) and two drivers: stack.lua
// decides, refund.lua undoes a decision's consumption. Source concatenates
// the helpers, the algorithms and stack.lua into the one script that every
// decision runs, so a stack of rules of any algorithms is decided
// atomically in one EVALSHA; RefundSource does the same with refund.lua.
package lua

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed *.lua
var files embed.FS

// parts is the concatenation order before a driver: helpers, algorithms.
var parts = []string{
	"lib.lua",
	"fixed_window.lua",
	"sliding_log.lua",
	"sliding_window.lua",
	"token_bucket.lua",
	"leaky_bucket.lua",
	"gcra.lua",
}

// Source is the text of the decision script (stack.lua as the driver).
var Source = mustConcat("stack.lua")

// RefundSource is the text of the refund script (refund.lua as the driver).
var RefundSource = mustConcat("refund.lua")

// Script is the decision script. Its Run sends EVALSHA and falls back to EVAL
// when the server answers NOSCRIPT (after a restart, a failover or SCRIPT
// FLUSH), so nothing needs loading up front.
var Script = redis.NewScript(Source)

// RefundScript is the refund script, run the same way.
var RefundScript = redis.NewScript(RefundSource)

func mustConcat(driver string) string {
	var b strings.Builder
	for _, name := range append(parts[:len(parts):len(parts)], driver) {
		src, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String()
}
