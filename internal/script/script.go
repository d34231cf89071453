package script

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/seed-bff0c9e1/ratelimit/lua"
)

// Mask is a set of algorithms, one bit per row of the table.
type Mask uint8

// All is the set of every algorithm.
var All = Mask(1<<len(algorithmTable) - 1)

// MaskOf is the set of the algorithms with these codes; ok is false for an
// unknown code.
func MaskOf(codes ...string) (m Mask, ok bool) {
	for _, code := range codes {
		i := 0
		for i < len(algorithmTable) && algorithmTable[i].code != code {
			i++
		}
		if i == len(algorithmTable) {
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
		decisions[m] = sync.OnceValue(func() *Script { return newScript(Source(Mask(m), "stack.lua")) })
	}
}

// Decision returns the decision script (stack.lua) for stacks whose
// algorithms are in m.
func Decision(m Mask) *Script { return decisions[m&All]() }

// Refund returns the refund script (refund.lua) for every algorithm.
var Refund = sync.OnceValue(func() *Script { return newScript(Source(All, "refund.lua")) })

// Block returns the script that blocks a client for a rule (block.lua).
var Block = sync.OnceValue(func() *Script { return newScript(Source(0, "block.lua")) })

// Delete returns the script that deletes keys of one hash tag (delete.lua).
var Delete = sync.OnceValue(func() *Script { return newScript(Source(0, "delete.lua")) })

// Source assembles a script: the layout header, lib.lua, refund_mode.lua
// for a refund script, the helpers and algorithm files in m, and the
// driver: stack.lua, refund.lua, block.lua or delete.lua. Comment lines and blank
// lines are left out: less to send after NOSCRIPT.
func Source(m Mask, driver string) string {
	refund := driver == "refund.lua"
	names := []string{"lib.lua"}
	if refund {
		names = append(names, "refund_mode.lua")
	}
	var files []string
	for i, a := range algorithmTable {
		if m&(1<<i) == 0 {
			continue
		}
		if !slices.Contains(files, a.file) {
			files = append(files, a.file)
		}
		for _, h := range a.helpers {
			if !slices.Contains(names, h) {
				names = append(names, h)
			}
		}
	}
	names = append(names, files...)
	names = append(names, driver)
	var b strings.Builder
	fmt.Fprintf(&b, "local ARGS_HEAD, ARGS_PER_RULE, REFUND_ARGS_PER_RULE, REPLY_HEAD, REPLY_PER_RULE = %d, %d, %d, %d, %d\n",
		ArgsHead, ArgsPerRule, RefundArgsPerRule, ReplyHead, ReplyPerRule)
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
	return b.String()
}
