package script

import (
	"fmt"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// The layout of ARGV and of the reply, named once here; every assembled
// script begins with these numbers as Lua constants (see header).
const (
	// ArgsHead is how many ARGV entries come before the rules: now and the
	// minimum TTL.
	ArgsHead = 2
	// ArgsPerRule is how many ARGV entries each rule takes in stack.lua: the
	// rule (Params.Arg), the cost and the penalty (see Penalty).
	ArgsPerRule = 3
	// RefundArgsHead is how many ARGV entries come before the rules in
	// refund.lua: now, the minimum TTL and the decision's instant.
	RefundArgsHead = 3
	// RefundArgsPerRule is how many ARGV entries each rule takes in
	// refund.lua: the rule (Params.Arg), the cost decided, the units to give
	// back, the token (mark, refunded) and the span (µs) a Reset's mark
	// voids the give-back within.
	RefundArgsPerRule = 6
	// ReplyHead is how many reply values come before the rules: allowed and
	// now.
	ReplyHead = 2
	// ReplyPerRule is how many reply values each rule has: status,
	// remaining, retry, reset, next and the token (mark, refunded).
	ReplyPerRule = 7
)

// Params is a rule's fixed part of ARGV, encoded once when the rule is
// built.
type Params struct {
	// Arg is the rule's argument to the scripts: Signature, as a value
	// ready for the client's argument list (so a call boxes nothing). The
	// function library decodes each rule once and keeps it.
	Arg any
	// Code is the algorithm's code.
	Code string
	// KeySuffix ends the keys of the algorithm's state: the code, then the
	// parameters its stored state depends on, joined by "-" (the window of
	// the windows and the log, in µs: "sw60000000"; the lease of a
	// concurrency limit; a bucket's capacity, rate and period:
	// "tb10-5-1000000"), so that a limit whose window changes starts afresh
	// instead of misreading, trimming or giving back into its state.
	KeySuffix string
	// Signature identifies the algorithm and its parameters
	// ("gc:5:1000000:10": the code and the three integer parameters).
	Signature string
	// Mask is the algorithm's bit, to pick the script for a stack.
	Mask Mask
}

// Encode encodes a valid algorithm for the scripts. An algorithm is a
// value: a pointer to one (nil or not) is refused before any of its
// methods runs.
func Encode(alg algorithms.Algorithm) (Params, error) {
	if alg == nil {
		return Params{}, fmt.Errorf("%w: no algorithm", algorithms.ErrInvalid)
	}
	for i, a := range algorithmTable {
		if p, ok := a.params(alg); ok {
			if err := alg.Validate(); err != nil {
				return Params{}, err
			}
			args := [3]string{strconv.FormatInt(p[0], 10), strconv.FormatInt(p[1], 10), strconv.FormatInt(p[2], 10)}
			suffix := a.code
			for j, i := range a.keyed {
				if j > 0 {
					suffix += "-"
				}
				suffix += args[i]
			}
			signature := a.code + ":" + args[0] + ":" + args[1] + ":" + args[2]
			return Params{
				Arg:       signature,
				Code:      a.code,
				KeySuffix: suffix,
				Signature: signature,
				Mask:      1 << i,
			}, nil
		}
	}
	return Params{}, fmt.Errorf("%w: %T is a pointer: pass the algorithm by value", algorithms.ErrInvalid, alg)
}

// Cost returns cost ready for the argument list; the usual costs box
// nothing.
func Cost(cost int) any {
	if cost >= 0 && cost < len(costs) {
		return costs[cost]
	}
	return cost
}

var costs = func() (c [64]any) {
	for i := range c {
		c[i] = i
	}
	return c
}()

// NoBlocks is the penalty argument of a rule that takes no blocks.
const NoBlocks = ""

// Penalty encodes a rule's penalty argument for a rule that takes blocks:
// how long a denial blocks the client, in µs (0: blocks only come from
// Block).
func Penalty(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }

// MinTTL encodes ARGV[2]: the shortest TTL of a written key, in whole
// milliseconds, at least 1.
func MinTTL(d time.Duration) string {
	return strconv.FormatInt(int64(max(1, (d+time.Millisecond-1)/time.Millisecond)), 10)
}

// Now encodes ARGV[1]: a time in microseconds since the Unix epoch, or "" for
// the server's TIME when t is zero.
func Now(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMicro(), 10)
}
