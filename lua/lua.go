// Package lua holds the Redis Lua scripts that decide rate limits, and the
// encoding of their arguments and replies.
//
// There is one readable file per algorithm (fixed_window.lua,
// sliding_log.lua, sliding_window.lua, token_bucket.lua, leaky_bucket.lua,
// gcra.lua: its decision and its refund), helper files (lib.lua always;
// state.lua, verdict.lua and meter.lua for the algorithms that use them) and two
// drivers: stack.lua decides, refund.lua undoes a decision's consumption.
// Script(m) concatenates the helpers and algorithms in m with stack.lua
// into one script, so a stack of rules of any algorithms is decided
// atomically in one EVALSHA. Lua creates every function of a script again
// on each run, so a script holds only what its stack uses, and refund
// functions only exist in RefundScript.
package lua

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed *.lua
var files embed.FS

// algorithmFiles are the algorithm files in code order: bit i of a Mask
// stands for algorithmFiles[i]. needs lists the helper files each uses.
var algorithmFiles = []struct {
	code, file string
	needs      []string
}{
	{"fw", "fixed_window.lua", []string{"state.lua"}},
	{"sl", "sliding_log.lua", nil},
	{"sw", "sliding_window.lua", []string{"state.lua"}},
	{"tb", "token_bucket.lua", []string{"state.lua", "verdict.lua", "meter.lua"}},
	{"lb", "leaky_bucket.lua", []string{"state.lua", "verdict.lua", "meter.lua"}},
	{"gc", "gcra.lua", []string{"verdict.lua"}},
}

// helperFiles are the optional helper files, in concatenation order.
var helperFiles = []string{"state.lua", "verdict.lua", "meter.lua"}

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

// RefundScript is the refund script for every algorithm, run the same way.
var RefundScript = redis.NewScript(concat(All, "refund.lua"))

// concat joins lib.lua, the helpers and algorithm files in m, and the
// driver. A refund script turns the refund definitions on first.
func concat(m Mask, driver string) string {
	needed := map[string]bool{}
	var algos []string
	for i, a := range algorithmFiles {
		if m&(1<<i) != 0 {
			algos = append(algos, a.file)
			for _, h := range a.needs {
				needed[h] = true
			}
		}
	}
	names := []string{"lib.lua"}
	for _, h := range helperFiles {
		if needed[h] {
			names = append(names, h)
		}
	}
	var b strings.Builder
	for _, name := range append(append(names, algos...), driver) {
		src, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		b.Write(src)
		b.WriteByte('\n')
		if name == "lib.lua" && driver == "refund.lua" {
			b.WriteString("refunds = {} -- a refund script: the algorithm files define their refunds\n")
		}
	}
	return b.String()
}
