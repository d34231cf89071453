// Package lua holds the Redis Lua scripts that decide rate limits, and the
// encoding of their arguments and replies.
//
// There is one readable file per algorithm (fixed_window.lua,
// sliding_log.lua, sliding_window.lua, token_bucket.lua, leaky_bucket.lua,
// gcra.lua), a file of shared helpers (lib.lua) and two drivers: stack.lua
// decides, refund.lua undoes a decision's consumption. Script(m)
// concatenates the helpers, the algorithms in m and stack.lua into one
// script, so a stack of rules of any algorithms is decided atomically in one
// EVALSHA, and Lua compiles only what the stack uses; RefundScript does the
// same with refund.lua and every algorithm.
package lua

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed *.lua
var files embed.FS

// algorithmFiles are the algorithm files in code order: bit i of a Mask
// stands for algorithmFiles[i].
var algorithmFiles = []struct{ code, file string }{
	{"fw", "fixed_window.lua"},
	{"sl", "sliding_log.lua"},
	{"sw", "sliding_window.lua"},
	{"tb", "token_bucket.lua"},
	{"lb", "leaky_bucket.lua"},
	{"gc", "gcra.lua"},
}

// Mask is a set of algorithms, one bit per algorithm file.
type Mask uint8

// All is the set of every algorithm.
const All Mask = 1<<6 - 1

// MaskOf is the bit of an algorithm code, 0 for an unknown one.
func MaskOf(code string) Mask {
	for i, a := range algorithmFiles {
		if a.code == code {
			return 1 << i
		}
	}
	return 0
}

// Source is the text of the decision script for every algorithm
// (stack.lua as the driver).
var Source = concat(All, "stack.lua")

// RefundSource is the text of the refund script (refund.lua as the driver).
var RefundSource = concat(All, "refund.lua")

// scripts[m] decides stacks whose algorithms are in m: Lua compiles only
// the algorithms a stack uses, which saves a little on every call.
var scripts = func() (s [All + 1]*redis.Script) {
	for m := range s {
		s[m] = redis.NewScript(concat(Mask(m), "stack.lua"))
	}
	return s
}()

// Script returns the decision script for stacks whose algorithms are in m.
// Its Run sends EVALSHA and falls back to EVAL when the server answers
// NOSCRIPT (after a restart, a failover or SCRIPT FLUSH), so nothing needs
// loading up front.
func Script(m Mask) *redis.Script { return scripts[m&All] }

// RefundScript is the refund script, run the same way.
var RefundScript = redis.NewScript(RefundSource)

// concat joins lib.lua, the algorithm files in m and the driver.
func concat(m Mask, driver string) string {
	names := []string{"lib.lua"}
	for i, a := range algorithmFiles {
		if m&(1<<i) != 0 {
			names = append(names, a.file)
		}
	}
	var b strings.Builder
	for _, name := range append(names, driver) {
		src, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String()
}
