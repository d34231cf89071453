package script

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
)

// stackCall is one stack's keys, rule arguments and instant ("": the
// test's; its minimum TTL is the test's).
type stackCall struct {
	keys  []string
	rules []any
	at    string
}

// The batch functions decide each stack exactly as a call of the stack
// function on its own would, in order, each at its own instant: same
// replies (errors included, and a failing stack does not stop the
// others), same state afterwards
// (checked by deciding everything a second time). The first round merges
// into batch.lua, the second into slots.lua (a cluster node's batch).
func TestBatchDecidesEachStackAsAlone(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	lib := Library()
	if err := s.Client.FunctionLoad(ctx, lib.Source).Err(); err != nil {
		t.Fatal(err)
	}
	now, later := "1795000000123456", "1795000001123456"
	stacks := func(p string) []stackCall {
		return []stackCall{
			{[]string{p + "{a}:fw"}, []any{"fw:2:1000000:0", 1, "", ""}, ""},
			{[]string{p + "{a}:sl"}, []any{"sl:2:1000000:0", 1, "", ""}, ""},
			{[]string{p + "{a}:sw"}, []any{"sw:2:1000000:0", 1, "", ""}, ""},
			{[]string{p + "{a}:tb"}, []any{"tb:2:1:1000000", 1, "", ""}, ""},
			{[]string{p + "{a}:lb"}, []any{"lb:2:1:1000000", 1, "", ""}, ""},
			{[]string{p + "{a}:gc"}, []any{"gc:1:1000000:2", 1, "", ""}, ""},
			{[]string{p + "{a}:qu"}, []any{"qu:1:1000000:2000000", 1, "", ""}, ""},
			{[]string{p + "{a}:cc"}, []any{"cc:2:30000000:0", 1, "", ""}, ""},
			{[]string{p + "{a}:cc"}, []any{"cc:2:30000000:0", 1, "", int64(1) << 52}, ""}, // a slot id
			// the same key again: the second decision sees the first's write
			{[]string{p + "{a}:fw"}, []any{"fw:2:1000000:0", 2, "", ""}, ""},
			{[]string{p + "{a}:gc"}, []any{"gc:1:1000000:2", 1, "", ""}, ""}, // its TTL one second longer
			// the same keys at an instant of their own, a window later
			{[]string{p + "{a}:fw"}, []any{"fw:2:1000000:0", 1, "", ""}, later},
			{[]string{p + "{a}:gc"}, []any{"gc:1:1000000:2", 1, "", ""}, later},
			// a stack of 3, one of whose rules takes blocks with a penalty
			{[]string{p + "{b}:gc", p + "{b}:tb", p + "{b}:fw", p + "{b}:fw:b"},
				[]any{"gc:5:1000000:5", 1, "", "", "tb:5:5:1000000", 1, "", "", "fw:1:1000000:0", 1, "3000000", ""}, ""},
			{[]string{p + "{x}:gc"}, []any{"xx:1:2:3", 1, "", ""}, ""},       // unknown algorithm
			{[]string{p + "{h}:gc"}, []any{"gc:1:1000000:2", 1, "", ""}, ""}, // a key of another type
			{[]string{p + "{b}:gc", p + "{b}:tb", p + "{b}:fw", p + "{b}:fw:b"},
				[]any{"gc:5:1000000:5", 1, "", "", "tb:5:5:1000000", 1, "", "", "fw:1:1000000:0", 1, "3000000", ""}, ""},
		}
	}
	for _, p := range []string{"one:", "batch:"} {
		if err := s.Client.HSet(ctx, p+"{h}:gc", "f", 1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var alone, batched [][]any
	for round := range 2 {
		var got []any
		for _, st := range stacks("one:") {
			args := append([]any{"fcall", lib.FunctionName("stack.lua"), len(st.keys)}, toAny(st.keys)...)
			args = append(append(args, cmp.Or(st.at, now), "1"), st.rules...)
			v, err := s.Client.Do(ctx, args...).Result()
			got = append(got, replyOrErr(v, err))
		}
		alone = append(alone, got)

		var cmds []redis.Cmder
		for _, st := range stacks("batch:") {
			args := append([]any{"fcall", lib.FunctionName("stack.lua"), len(st.keys)}, toAny(st.keys)...)
			cmds = append(cmds, noRetry{redis.NewCmd(ctx, append(append(args, cmp.Or(st.at, now), "1"), st.rules...)...)})
		}
		b, rest := MergeStacks(ctx, cmds, round == 1)
		if b == nil || len(rest) != 0 {
			t.Fatalf("round %d: merged %v, left %d", round, b != nil, len(rest))
		}
		_ = s.Client.Process(ctx, b.Cmd)
		b.Answer()
		got = nil
		for _, c := range cmds {
			v, err := c.(noRetry).Result()
			got = append(got, replyOrErr(v, err))
		}
		batched = append(batched, got)
	}
	for round := range alone {
		for i := range alone[round] {
			if !reflect.DeepEqual(alone[round][i], batched[round][i]) {
				t.Errorf("round %d, stack %d: alone %v, batched %v", round, i, alone[round][i], batched[round][i])
			}
		}
	}
	t.Logf("first round: %v", alone[0])
	// A batch writes each key once, at its end: the value and the TTL of
	// the key's last decision, as the calls alone left them.
	for _, st := range stacks("") {
		for _, k := range st.keys {
			one, batch := keyState(t, s.Client, "one:"+k), keyState(t, s.Client, "batch:"+k)
			if one.value != batch.value || one.ttl-batch.ttl > 100*time.Millisecond || batch.ttl-one.ttl > 100*time.Millisecond {
				t.Errorf("%s: alone %+v, batched %+v", k, one, batch)
			}
		}
	}
}

// state is a key's value (its type, for a key that is not a string) and
// its TTL.
type state struct {
	value string
	ttl   time.Duration
}

func keyState(t *testing.T, c *redis.Client, key string) state {
	t.Helper()
	ctx := context.Background()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	st := state{value: typ}
	if typ == "string" {
		st.value = c.Get(ctx, key).Val()
	}
	st.ttl = c.PTTL(ctx, key).Val()
	return st
}

func toAny(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// replyOrErr is a reply, or its error's text without the script location
// Redis appends to an error raised outside a pcall.
func replyOrErr(v any, err error) any {
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), " script: ")
		return "error: " + msg
	}
	return v
}

// MergeStacks merges the stack function's calls that share the first
// one's minimum TTL, each with its own instant, leaves every other command
// as it was, in order, and merges nothing when fewer than two calls
// qualify.
func TestMergeStacks(t *testing.T) {
	ctx := context.Background()
	lib := Library()
	stack, batch := lib.FunctionName("stack.lua"), lib.FunctionName("batch.lua")
	call := func(now, minTTL string, keys []any, rules ...any) redis.Cmder {
		args := append([]any{"fcall", stack, len(keys)}, keys...)
		return noRetry{redis.NewCmd(ctx, append(append(args, now, minTTL), rules...)...)}
	}
	a := call("", "1", []any{"k1"}, "gc:1:1000000:1", 1, "", "")
	get := redis.NewCmd(ctx, "get", "x")
	b := call("", "1", []any{"k2", "k3", "k3:b"}, "fw:1:1000000:0", 2, "", "", "tb:1:1:1000000", 1, "5", int64(7))
	at := call("1795000000000000", "1", []any{"k4"}, "gc:1:1000000:1", 1, "", "")
	longer := call("", "3600000", []any{"k6"}, "gc:1:1000000:1", 1, "", "")
	script := redis.NewCmd(ctx, "fcall", lib.FunctionName("refund.lua"), 1, "k5", "", "1", "gc:1:1000000:1", 1, 1)

	m, rest := MergeStacks(ctx, []redis.Cmder{a, get, b, at, longer, script}, false)
	if m == nil {
		t.Fatal("nothing merged")
	}
	if !slices.Equal(rest, []redis.Cmder{get, longer, script}) {
		t.Errorf("rest: %v", rest)
	}
	want := []any{"fcall", batch, 5, "k1", "k2", "k3", "k3:b", "k4", "", "1", 3,
		"", 1, "gc:1:1000000:1", 1, "", "",
		"", 2, "fw:1:1000000:0", 2, "", "", "tb:1:1:1000000", 1, "5", int64(7),
		"1795000000000000", 1, "gc:1:1000000:1", 1, "", ""}
	if got := m.Cmd.Args(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged:\n got %v\nwant %v", got, want)
	}
	slots, _ := MergeStacks(ctx, []redis.Cmder{a, b}, true)
	want = []any{"fcall", lib.FunctionName("slots.lua"), 1, "k1", 4, "k1", "k2", "k3", "k3:b", "", "1", 2,
		"", 1, "gc:1:1000000:1", 1, "", "",
		"", 2, "fw:1:1000000:0", 2, "", "", "tb:1:1:1000000", 1, "5", int64(7)}
	if got := slots.Cmd.Args(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged for a cluster node:\n got %v\nwant %v", got, want)
	}
	for _, cmds := range [][]redis.Cmder{{a}, {a, get}, {a, longer}, {get, script}, nil} {
		if m, rest := MergeStacks(ctx, cmds, false); m != nil || !slices.Equal(rest, cmds) {
			t.Errorf("%d commands: merged %v, rest %v", len(cmds), m != nil, rest)
		}
	}
}

// A batch the server cannot run (its library is not loaded) gives every
// merged call the server's answer, so that each caller loads the library
// and runs its own call again, as after any "Function not found".
func TestBatchWithoutLibrary(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	stack := Library().FunctionName("stack.lua")
	var cmds []redis.Cmder
	for _, k := range []string{"{a}", "{b}", "{c}"} {
		cmds = append(cmds, noRetry{redis.NewCmd(ctx, "fcall", stack, 1, k, "", "1", "gc:1:1000000:1", 1, "")})
	}
	b, _ := MergeStacks(ctx, cmds, false)
	_ = s.Client.Process(ctx, b.Cmd)
	b.Answer()
	for i, c := range cmds {
		if err := c.Err(); err == nil || !redis.HasErrorPrefix(err, "Function not found") {
			t.Errorf("call %d: %v, want Function not found", i, err)
		}
	}
}
