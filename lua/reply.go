package lua

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// ErrReply is wrapped when a script reply does not have the documented shape.
var ErrReply = errors.New("ratelimit: malformed script reply")

// ParseReply decodes the reply of stack.lua for n rules into results[:n],
// whose Limit fields the caller fills. It reports whether the stack allowed.
func ParseReply(v any, results []algorithms.Result) (bool, error) {
	vals, ok := v.([]any)
	if !ok || len(vals) != 1+4*len(results) {
		return false, fmt.Errorf("%w: %T of %d values for %d rules", ErrReply, v, len(vals), len(results))
	}
	var ints [4]int64
	for i := range results {
		for j := range ints {
			n, ok := vals[1+4*i+j].(int64)
			if !ok {
				return false, fmt.Errorf("%w: value %d is %T", ErrReply, 1+4*i+j, vals[1+4*i+j])
			}
			ints[j] = n
		}
		r := &results[i]
		r.Allowed = ints[0] == 1
		r.Remaining = int(max(0, ints[1]))
		r.RetryAfter = ms(ints[2])
		r.ResetAfter = ms(ints[3])
	}
	allowed, ok := vals[0].(int64)
	if !ok {
		return false, fmt.Errorf("%w: verdict is %T", ErrReply, vals[0])
	}
	return allowed == 1, nil
}

func ms(n int64) time.Duration {
	if n < 0 {
		return algorithms.Never
	}
	return time.Duration(n) * time.Millisecond
}
