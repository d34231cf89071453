package script

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// ErrReply is wrapped when a script reply does not have the documented shape.
var ErrReply = errors.New("ratelimit: malformed script reply")

// Reply is the stack-level part of a stack.lua reply.
type Reply struct {
	// Allowed is true when every rule allowed and their state was written.
	Allowed bool
	// Now is the time decided at, in µs since the Unix epoch.
	Now int64
}

// Rule is one rule's part of a stack.lua reply.
type Rule struct {
	// Result is the rule's result; its quota is the caller's to know.
	Result algorithms.Result
	// Blocked is true when a block denied the rule.
	Blocked bool
	// Token is what refund.lua needs to give the rule's consumption back.
	Token store.Token
	// Lease is the units taken beyond the cost, for a leased rule.
	Lease int
}

// blocked is the status of a rule denied by a block.
const blocked = -2

// Parse decodes the reply of stack.lua for n rules: it calls set for each
// rule.
func Parse(v any, n int, set func(i int, r Rule)) (Reply, error) {
	vals, ok := v.([]any)
	if !ok || len(vals) != ReplyHead+ReplyPerRule*n {
		return Reply{}, fmt.Errorf("%w: %T of %d values for %d rules", ErrReply, v, len(vals), n)
	}
	var ints [ReplyHead + ReplyPerRule]int64
	for i := range ints[:ReplyHead] {
		if ints[i], ok = vals[i].(int64); !ok {
			return Reply{}, fmt.Errorf("%w: value %d is %T", ErrReply, i, vals[i])
		}
	}
	reply := Reply{Allowed: ints[0] == 1, Now: ints[1]}
	for i := range n {
		at := ReplyHead + ReplyPerRule*i
		for j := range ReplyPerRule {
			if ints[j], ok = vals[at+j].(int64); !ok {
				return Reply{}, fmt.Errorf("%w: value %d is %T", ErrReply, at+j, vals[at+j])
			}
		}
		r := Rule{
			Result: algorithms.Result{
				Allowed:    ints[0] == 1,
				Remaining:  int(max(0, ints[1])),
				ResetAfter: ms(ints[3]),
				NextAfter:  ms(ints[4]),
			},
			Blocked: ints[0] == blocked,
			Token:   store.Token{Stamp: ints[5], Refunded: ints[6], Epoch: ints[8]},
			Lease:   int(ints[7]),
		}
		// An allowed rule's retry is its delay.
		if r.Result.Allowed {
			r.Result.Delay = ms(ints[2])
		} else {
			r.Result.RetryAfter = ms(ints[2])
		}
		set(i, r)
	}
	return reply, nil
}

// ms decodes a reply duration, µs or -1 for Never, rounded up to whole
// milliseconds (the results' precision; Lua would need several calls for
// it).
func ms(us int64) time.Duration {
	if us < 0 {
		return algorithms.Never
	}
	return time.Duration((us+999)/1000) * time.Millisecond
}
