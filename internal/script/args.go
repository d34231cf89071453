package script

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
)

// The layout of ARGV and of the reply, named once here; every assembled
// script begins with these numbers as Lua constants (see header).
const (
	// ArgsHead is how many ARGV entries come before the rules: now and the
	// minimum TTL.
	ArgsHead = 2
	// ArgsPerRule is how many ARGV entries each rule takes in stack.lua: the
	// rule (Params.Arg), the cost, the penalty (see Penalty) and the slot
	// (see Slot).
	ArgsPerRule = 4
	// RefundArgsHead is how many ARGV entries come before the rules in
	// refund.lua: now, the minimum TTL and the decision's instant.
	RefundArgsHead = 3
	// RefundArgsPerRule is how many ARGV entries each rule takes in
	// refund.lua: the rule (Params.Arg), the cost decided, the units to give
	// back, the token (stamp, refunded, epoch), the TTL (µs) of the Reset's
	// mark that voids the refund, and for an unknown instant how long (µs)
	// before now the decision ran at most.
	RefundArgsPerRule = 8
	// ReplyHead is how many reply values come before the rules: allowed and
	// now.
	ReplyHead = 2
	// ReplyPerRule is how many reply values each rule has: status,
	// remaining, retry, reset, next, the token's stamp and refunded, the
	// lease taken and the token's epoch.
	ReplyPerRule = 9
)

// Params is a rule's fixed part of ARGV, encoded once per algorithm value
// by the store that runs the scripts.
type Params struct {
	// Arg is the rule's argument to the scripts: the algorithm's
	// algo.Desc.Params, as a value ready for the client's argument list (so
	// a call boxes nothing). The function library decodes each rule once
	// and keeps it.
	Arg any
	// Mask is the algorithm's bit, to pick the script for a stack.
	Mask Mask
}

// Encode readies an algorithm's parameters, as algo.Desc.Params encodes
// them, for the scripts.
func Encode(params string) (Params, error) {
	code, rest, _ := strings.Cut(params, ":")
	for i, r := range algo.Table {
		if r.Code == code && strings.Count(rest, ":") == 2 {
			return Params{Arg: params, Mask: 1 << i}, nil
		}
	}
	return Params{}, fmt.Errorf("%w: no algorithm's parameters: %q", algorithms.ErrInvalid, params)
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

// LeaseCost encodes the cost argument of a leased rule: the request's
// cost and the most units to take beyond it.
func LeaseCost(cost, lease int) string {
	return strconv.Itoa(cost) + ":" + strconv.Itoa(lease)
}

// ShadowCost encodes the cost argument of a shadow rule (see
// store.Check.Shadow).
func ShadowCost(cost int) string {
	return strconv.Itoa(cost) + ":shadow"
}

// NoBlocks is the penalty argument of a rule that takes no blocks.
const NoBlocks = ""

// NoSlot is the slot argument of a check without a slot id.
const NoSlot = ""

// Slot encodes a check's slot argument (store.Check.Slot): the id that
// names a sliding log's or a concurrency limit's units, so that their
// refund is exact and sending it twice gives back once.
func Slot(id int64) any {
	if id == 0 {
		return NoSlot
	}
	return id
}

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
