package lua

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
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

// ParseReply decodes the reply of stack.lua for len(results) rules into
// results, whose Limit fields the caller fills, and into tokens (the refund
// tokens) unless it is nil.
func ParseReply(v any, results []algorithms.Result, tokens []int64) (Reply, error) {
	vals, ok := v.([]any)
	if !ok || len(vals) != 2+5*len(results) {
		return Reply{}, fmt.Errorf("%w: %T of %d values for %d rules", ErrReply, v, len(vals), len(results))
	}
	var ints [5]int64
	for i := range results {
		for j := range ints {
			n, ok := vals[2+5*i+j].(int64)
			if !ok {
				return Reply{}, fmt.Errorf("%w: value %d is %T", ErrReply, 2+5*i+j, vals[2+5*i+j])
			}
			ints[j] = n
		}
		r := &results[i]
		r.Allowed = ints[0] == 1
		r.Remaining = int(max(0, ints[1]))
		r.RetryAfter = ms(ints[2])
		r.ResetAfter = ms(ints[3])
		if tokens != nil {
			tokens[i] = ints[4]
		}
	}
	allowed, ok1 := vals[0].(int64)
	now, ok2 := vals[1].(int64)
	if !ok1 || !ok2 {
		return Reply{}, fmt.Errorf("%w: header is %T, %T", ErrReply, vals[0], vals[1])
	}
	return Reply{Allowed: allowed == 1, Now: now}, nil
}

func ms(n int64) time.Duration {
	if n < 0 {
		return algorithms.Never
	}
	return time.Duration(n) * time.Millisecond
}
