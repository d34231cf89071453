package script

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Batch is the merge of several stack.lua function calls into one call of
// the library's batch function (batch.lua, or slots.lua for a Redis
// Cluster node), which decides each stack as its own call would, in one
// run: Redis then does the per-call work (the command, the arguments'
// tables, TIME, the reply) once for all of them. Merge only calls that are
// about to be sent together to one server.
type Batch struct {
	// Cmd is the merged call; like every script call, go-redis never sends
	// it a second time once written.
	Cmd     redis.Cmder
	members []redis.Cmder
}

// MergeStacks merges the calls of the library's stack function among cmds
// that share their minimum TTL argument (that of the first such call) into
// one Batch, built with ctx; each keeps its own instant (its time
// argument: the one it was given, or the server's TIME, read once per
// batch). rest are the commands it did not merge, in order; b is nil, and
// rest all of cmds, when fewer than two could be merged. With slots, the
// calls' keys may be in several hash slots of one cluster node: the batch
// is a slots.lua call, which declares the first key and carries the others
// among its arguments.
func MergeStacks(ctx context.Context, cmds []redis.Cmder, slots bool) (b *Batch, rest []redis.Cmder) {
	lib := Library()
	stack := lib.FunctionName("stack.lua")
	var minTTL any
	var members []redis.Cmder
	keys, args := 0, 0
	for _, c := range cmds {
		a := c.Args()
		if len(a) < 5 || a[0] != "fcall" || a[1] != stack {
			rest = append(rest, c)
			continue
		}
		n := a[2].(int)
		if members == nil {
			minTTL = a[4+n]
		} else if a[4+n] != minTTL {
			rest = append(rest, c)
			continue
		}
		members = append(members, c)
		keys += n
		args += len(a) - (5 + n) + 2 // its rules' arguments, its instant and their count
	}
	if len(members) < 2 {
		return nil, cmds
	}
	all := make([]any, 0, 5+keys+3+args)
	if slots {
		all = append(all, "fcall", lib.FunctionName("slots.lua"), 1, members[0].Args()[3], keys)
	} else {
		all = append(all, "fcall", lib.FunctionName("batch.lua"), keys)
	}
	for _, c := range members {
		a := c.Args()
		all = append(all, a[3:3+a[2].(int)]...)
	}
	all = append(all, "", minTTL, len(members))
	for _, c := range members {
		a := c.Args()
		n := a[2].(int)
		rules := a[5+n:]
		all = append(all, a[3+n], len(rules)/ArgsPerRule)
		all = append(all, rules...)
	}
	return &Batch{Cmd: noRetry{redis.NewCmd(ctx, all...)}, members: members}, rest
}

// Answer gives each merged call its own reply, or error, from the batch's.
func (b *Batch) Answer() {
	v, err := b.Cmd.(noRetry).Result()
	replies, ok := v.([]any)
	if err == nil && (!ok || len(replies) != len(b.members)) {
		err = ErrReply
	}
	for i, c := range b.members {
		if err != nil {
			c.SetErr(err)
		} else if e, isErr := replies[i].(error); isErr {
			c.SetErr(e)
		} else {
			c.(interface{ SetVal(any) }).SetVal(replies[i])
		}
	}
}
