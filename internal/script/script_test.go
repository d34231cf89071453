package script

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/lua"
)

// Every .lua file starts with a comment naming its KEYS, ARGV and reply,
// and every file is used by some script.
func TestEveryFileDocumentsItsInterface(t *testing.T) {
	names, err := fs.Glob(lua.Files, "*.lua")
	if err != nil || len(names) != 22 {
		t.Fatalf("found %v (%v), want 22 .lua files", names, err)
	}
	everything := Source(All, "stack.lua") + Source(All, "refund.lua") + Block().Source() + Delete().Source() + Library().Source
	for _, name := range names {
		src, err := fs.ReadFile(lua.Files, name)
		if err != nil {
			t.Fatal(err)
		}
		var head, body strings.Builder
		inHead := true
		for line := range strings.Lines(string(src)) {
			if inHead && strings.HasPrefix(line, "--") {
				head.WriteString(line)
				continue
			}
			inHead = false
			if trimmed := strings.TrimSpace(line); trimmed != "" && !strings.HasPrefix(trimmed, "--") {
				body.WriteString(line)
			}
		}
		for _, word := range []string{"KEYS", "ARGV", "Reply"} {
			if !strings.Contains(head.String(), word) {
				t.Errorf("%s: the opening comment does not mention %s", name, word)
			}
		}
		if !strings.Contains(everything, body.String()) {
			t.Errorf("%s: not in any assembled script", name)
		}
	}
}

// Every per-set script compiles on a server, the sets differ, and the
// assembled scripts carry no comments.
func TestEveryScriptLoads(t *testing.T) {
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	seen := map[string]string{} // hash -> the files of its set
	for i := 0; i <= int(All); i++ {
		m := Mask(i)
		s := Stack(m)
		if err := rdb.ScriptLoad(context.Background(), s.Source()).Err(); err != nil {
			t.Fatalf("mask %08b: %v", m, err)
		}
		// Two sets share a script only when they need the same files (a
		// concurrency limit runs the sliding log's file).
		var files []string
		for j, a := range algo.Table {
			if m&(1<<j) != 0 && !slices.Contains(files, a.File) {
				files = append(files, a.File)
			}
		}
		slices.Sort(files)
		key := strings.Join(files, ",")
		if prev, ok := seen[s.Hash()]; ok && prev != key {
			t.Errorf("mask %08b: the same script as another set of files", m)
		}
		seen[s.Hash()] = key
	}
	for _, s := range []*Script{Refund(), Block(), Delete()} {
		if err := rdb.ScriptLoad(context.Background(), s.Source()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range []string{Source(All, "stack.lua"), Source(All, "refund.lua"), Block().Source()} {
		if strings.Contains(src, "\n--") || strings.Contains(src, "\n\n") {
			t.Error("an assembled script keeps comment or blank lines")
		}
	}
}

func TestMasks(t *testing.T) {
	for _, tc := range []struct {
		codes []string
		want  Mask
		ok    bool
	}{
		{nil, 0, true},
		{[]string{"fw"}, 1, true},
		{[]string{"gc", "fw"}, 1<<5 | 1, true},
		{[]string{"fw", "sl", "sw", "tb", "lb", "gc", "qu", "cc"}, All, true},
		{[]string{"xx"}, 0, false},
	} {
		got, ok := MaskOf(tc.codes...)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MaskOf(%v) = %06b, %v; want %06b, %v", tc.codes, got, ok, tc.want, tc.ok)
		}
	}
	if len(algo.Table) > 8 {
		t.Fatalf("%d algorithms do not fit a Mask", len(algo.Table))
	}
}

// Every row of the table encodes its algorithm, and the key code matches
// the file that registers it.
func TestTableRows(t *testing.T) {
	for i, alg := range []algorithms.Algorithm{
		algorithms.FixedWindow{Limit: 10, Window: time.Second},
		algorithms.SlidingLog{Limit: 10, Window: time.Second},
		algorithms.SlidingWindow{Limit: 10, Window: time.Second},
		algorithms.TokenBucket{Capacity: 10, Rate: 1, Period: time.Second},
		algorithms.LeakyBucket{Capacity: 10, Rate: 1, Period: time.Second},
		algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 10},
		algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: time.Second},
		algorithms.Concurrency{Limit: 10, TTL: time.Minute},
	} {
		d, err := algo.Describe(alg)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Encode(d.Params)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Mask, Mask(1<<i); got != want {
			t.Errorf("%v: mask %08b, want %08b", alg, got, want)
		}
		row := algo.Table[i]
		src, _ := fs.ReadFile(lua.Files, row.File)
		if !strings.Contains(string(src), fmt.Sprintf("algorithms.%s = function", row.Code)) &&
			!strings.Contains(string(src), fmt.Sprintf("algorithms.%s, commits.%s = ", row.Code, row.Code)) {
			t.Errorf("%s does not register algorithms.%s", row.File, row.Code)
		}
	}
	for _, params := range []string{"", "zz:1:2:3", "gc"} {
		if _, err := Encode(params); err == nil {
			t.Errorf("Encode accepted %q", params)
		}
	}
}

// The reply layout Go parses is the one the script writes: a stack of n
// rules replies ReplyHead + n*ReplyPerRule values.
func TestReplyLayoutAgrees(t *testing.T) {
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	d, _ := algo.Describe(algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 2})
	gc, _ := Encode(d.Params)
	for n := 1; n <= 3; n++ {
		keys := make([]string, n)
		args := []any{Now(time.UnixMicro(1_795_000_000_000_000)), MinTTL(0)}
		for i := range n {
			keys[i] = fmt.Sprintf("{t}:%d:%d", n, i)
			args = append(args, gc.Arg, Cost(1), NoBlocks, NoSlot)
		}
		v, err := Stack(gc.Mask).Run(context.Background(), rdb, CallOf(keys, args...))
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		reply, err := Parse(v, n, func(i int, r Rule) {
			calls++
			if !r.Result.Allowed || r.Result.Remaining != 1 || r.Token.Stamp <= 0 || r.Blocked {
				t.Errorf("rule %d: %+v", i, r)
			}
		})
		if err != nil || calls != n || !reply.Allowed || reply.Now != 1_795_000_000_000_000 {
			t.Fatalf("%d rules: %+v, %d calls, %v", n, reply, calls, err)
		}
		if _, err := Parse(v, n+1, func(int, Rule) {}); err == nil {
			t.Errorf("%d rules parsed as %d", n, n+1)
		}
	}
}

// A rule argument the scripts cannot decode is refused with an error that
// names it, by the decision and the refund scripts alike; nothing is
// written.
func TestMalformedRuleArgument(t *testing.T) {
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	now := Now(time.UnixMicro(1_795_000_000_000_000))
	for _, arg := range []string{"xx:1:2:3", "gc:1:2", "gc:1:-2:3", "gc", ""} {
		_, err := Stack(All).Run(ctx, rdb, CallOf([]string{"{t}:a"}, now, MinTTL(0), arg, Cost(1), NoBlocks, NoSlot))
		if err == nil || !strings.Contains(err.Error(), "ratelimit: unknown algorithm "+arg) {
			t.Errorf("decision with %q: %v", arg, err)
		}
		_, err = Refund().Run(ctx, rdb, CallOf([]string{"{t}:a", "{t}:r"}, now, MinTTL(0), now, arg, 1, 1, 0, 0, 0))
		if err == nil || !strings.Contains(err.Error(), "ratelimit: unknown algorithm "+arg) {
			t.Errorf("refund with %q: %v", arg, err)
		}
	}
	if keys := srv.Keys(); len(keys) != 0 {
		t.Errorf("keys written: %v", keys)
	}
}
