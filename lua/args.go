package lua

import (
	"fmt"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// ArgsPerRule is how many ARGV entries each rule takes in stack.lua after
// the two leading ones (now and the minimum TTL); refund.lua takes one more
// (the token).
const ArgsPerRule = 5

// Params is a rule's fixed part of ARGV, encoded once when the rule is
// built: Args holds the algorithm code and its three integer parameters (as
// values ready for the client's argument list, so a call boxes nothing).
type Params struct {
	Args [4]any
	code string
	mask Mask
}

// ParamsOf encodes a valid algorithm for the script.
func ParamsOf(alg algorithms.Algorithm) (Params, error) {
	if alg == nil {
		return Params{}, fmt.Errorf("%w: no algorithm", algorithms.ErrInvalid)
	}
	if err := alg.Validate(); err != nil {
		return Params{}, err
	}
	switch a := alg.(type) {
	case algorithms.FixedWindow:
		return params("fw", a.Limit, us(a.Window), 0), nil
	case algorithms.SlidingLog:
		return params("sl", a.Limit, us(a.Window), 0), nil
	case algorithms.SlidingWindow:
		return params("sw", a.Limit, us(a.Window), 0), nil
	case algorithms.TokenBucket:
		return params("tb", a.Capacity, a.Rate, us(a.Period)), nil
	case algorithms.LeakyBucket:
		return params("lb", a.Capacity, a.Rate, us(a.Period)), nil
	case algorithms.GCRA:
		return params("gc", a.Rate, us(a.Period), a.Burst), nil
	}
	return Params{}, fmt.Errorf("%w: unsupported algorithm %T", algorithms.ErrInvalid, alg)
}

// Code is the short algorithm code, also used in key names.
func (p Params) Code() string { return p.code }

// Mask is the algorithm's bit, to pick the script for a stack (see Script).
func (p Params) Mask() Mask { return p.mask }

func us(d time.Duration) int { return int(d.Microseconds()) }

func params(code string, a, b, c int) Params {
	return Params{Args: [4]any{code, strconv.Itoa(a), strconv.Itoa(b), strconv.Itoa(c)}, code: code, mask: MaskOf(code)}
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
