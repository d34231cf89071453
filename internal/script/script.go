// Package script assembles the Redis scripts from the Lua sources in package
// lua and the algorithm table of package algo, encodes their arguments,
// decodes their replies and runs them (as functions of one library where
// the server has them, as scripts elsewhere).
package script

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/lua"
)

// Mask is a set of algorithms, one bit per row of the table.
type Mask uint8

// All is the set of every algorithm.
var All = Mask(1<<len(algo.Table) - 1)

// MaskOf is the set of the algorithms with these codes; ok is false for an
// unknown code.
func MaskOf(codes ...string) (m Mask, ok bool) {
	for _, code := range codes {
		i := 0
		for i < len(algo.Table) && algo.Table[i].Code != code {
			i++
		}
		if i == len(algo.Table) {
			return 0, false
		}
		m |= 1 << i
	}
	return m, true
}

// decisions[m] decides stacks whose algorithms are in m, assembled on first
// use: a script holds only what its stack uses, since Lua creates every
// function of a script again on each run.
var decisions [1 << 8]func() *Script

func init() {
	for m := range decisions {
		decisions[m] = sync.OnceValue(func() *Script { return newScript(Source(Mask(m), "stack.lua"), "stack.lua") })
	}
}

// Stack returns the decision script (stack.lua) for stacks whose
// algorithms are in m.
func Stack(m Mask) *Script { return decisions[m&All]() }

// Refund returns the refund script (refund.lua) for every algorithm.
var Refund = sync.OnceValue(func() *Script { return newScript(Source(All, "refund.lua"), "refund.lua") })

// Block returns the script that blocks a client for a rule (block.lua).
var Block = sync.OnceValue(func() *Script { return newScript(Source(0, "block.lua"), "block.lua") })

// Delete returns the script that deletes keys of one hash tag (delete.lua).
var Delete = sync.OnceValue(func() *Script { return newScript(Source(0, "delete.lua"), "delete.lua") })

// drivers are the files that reply, each a function of the library
// (batch.lua and slots.lua only there: they decide what a client
// coalesced).
var drivers = []string{"stack.lua", "batch.lua", "slots.lua", "refund.lua", "block.lua", "delete.lua"}

// flags are the drivers' function flags: slots.lua reads keys of several
// hash slots that one Redis Cluster node serves.
var flags = map[string]string{"slots.lua": "'allow-cross-slot-keys'"}

// Source assembles a script: the layout header, lib.lua, refund_mode.lua
// for a refund script, the helpers and algorithm files in m, decide.lua
// for a decision script, mark.lua for block.lua and delete.lua, and the
// driver: stack.lua, refund.lua, block.lua or delete.lua, started with the
// script's KEYS and ARGV. Comment lines and blank lines are left out: less
// to send after NOSCRIPT.
func Source(m Mask, driver string) string {
	var b strings.Builder
	b.WriteString(header())
	b.WriteString("local SCRIPT_KEYS, SCRIPT_ARGV = KEYS, ARGV\n") // before lib.lua declares its own
	names := sources(m, driver == "refund.lua", driver == "stack.lua")
	if driver == "block.lua" || driver == "delete.lua" {
		names = append(names, "mark.lua")
	}
	writeFiles(&b, names)
	b.WriteString("start(SCRIPT_KEYS, SCRIPT_ARGV)\n")
	writeFiles(&b, []string{driver})
	return b.String()
}

// FunctionLibrary is the Redis function library of every algorithm: the helpers
// and algorithms are created once, when it loads, and each driver is a
// function (see FunctionName). Its name and its functions' end with a hash
// of its code, so two versions of an application, during a rolling deploy,
// never replace each other's.
type FunctionLibrary struct {
	Name, Source string
	functions    map[string]any // driver -> its function's name, boxed once for command lines
}

// FunctionName is the library's function for a driver ("stack.lua").
func (l *FunctionLibrary) FunctionName(driver string) string {
	name, _ := l.functions[driver].(string)
	return name
}

// Library returns the function library of every algorithm.
var Library = sync.OnceValue(func() *FunctionLibrary {
	var body strings.Builder
	body.WriteString(header())
	writeFiles(&body, append(sources(All, true, true), "batches.lua", "mark.lua"))
	for _, d := range drivers {
		fmt.Fprintf(&body, "redis.register_function{function_name='%s', flags={%s}, callback=function(keys, args)\nstart(keys, args)\n", functionName(d, hashMark), flags[d])
		writeFiles(&body, []string{d})
		body.WriteString("end}\n")
	}
	sum := sha1.Sum([]byte(body.String()))
	hash := hex.EncodeToString(sum[:6])
	l := &FunctionLibrary{Name: "ratelimit_" + hash, functions: map[string]any{}}
	l.Source = "#!lua name=" + l.Name + "\n" + strings.ReplaceAll(body.String(), hashMark, hash)
	for _, d := range drivers {
		l.functions[d] = functionName(d, hash)
	}
	return l
})

// functionName is the name of a driver's function in the library whose
// hash is hash ("rl_stack_<hash>" for stack.lua).
func functionName(driver, hash string) string {
	return "rl_" + strings.TrimSuffix(driver, ".lua") + "_" + hash
}

// hashMark stands for the library's hash in its body until it is known.
const hashMark = "@HASH@"

// header defines the layout constants for Lua.
func header() string {
	return fmt.Sprintf("local ARGS_HEAD, ARGS_PER_RULE, REFUND_ARGS_HEAD, REFUND_ARGS_PER_RULE, REPLY_HEAD, REPLY_PER_RULE = %d, %d, %d, %d, %d, %d\n",
		ArgsHead, ArgsPerRule, RefundArgsHead, RefundArgsPerRule, ReplyHead, ReplyPerRule)
}

// sources lists what comes before a driver: lib.lua, refund_mode.lua when
// refunds are wanted, the helper and algorithm files of the algorithms in
// m, each once, and decide.lua when decisions are.
func sources(m Mask, refund, decide bool) []string {
	names := []string{"lib.lua"}
	if refund {
		names = append(names, "refund_mode.lua")
	}
	var files []string
	for i, a := range algo.Table {
		if m&(1<<i) == 0 {
			continue
		}
		if !slices.Contains(files, a.File) {
			files = append(files, a.File)
		}
		for _, h := range a.Helpers {
			if !slices.Contains(names, h) {
				names = append(names, h)
			}
		}
	}
	names = append(names, files...)
	if decide {
		names = append(names, "decide.lua")
	}
	return names
}

// writeFiles writes the files without their comment and blank lines.
func writeFiles(b *strings.Builder, names []string) {
	for _, name := range names {
		src, err := fs.ReadFile(lua.Files, name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		for line := range strings.Lines(string(src)) {
			if trimmed := strings.TrimSpace(line); trimmed != "" && !strings.HasPrefix(trimmed, "--") {
				b.WriteString(line)
			}
		}
	}
}
