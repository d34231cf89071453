// Package lua holds the Redis Lua scripts that decide rate limits, and the
// encoding of their arguments and replies.
//
// There is one readable file per algorithm (fixed_window.lua,
// sliding_log.lua, sliding_window.lua, token_bucket.lua, leaky_bucket.lua,
// gcra.lua), a file of shared helpers (lib.lua) and a driver (stack.lua).
// Source concatenates them into the one script that every decision runs, so
// a stack of rules of any algorithms is decided atomically in one EVALSHA.
package lua

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed *.lua
var files embed.FS

// order is the concatenation order: helpers, algorithms, then the driver.
var order = []string{
	"lib.lua",
	"fixed_window.lua",
	"sliding_log.lua",
	"sliding_window.lua",
	"token_bucket.lua",
	"leaky_bucket.lua",
	"gcra.lua",
	"stack.lua",
}

// Source is the text of the decision script.
var Source = mustConcat()

// Script is the decision script. Its Run sends EVALSHA and falls back to EVAL
// when the server answers NOSCRIPT (after a restart, a failover or SCRIPT
// FLUSH), so nothing needs loading up front.
var Script = redis.NewScript(Source)

func mustConcat() string {
	var b strings.Builder
	for _, name := range order {
		src, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String()
}
