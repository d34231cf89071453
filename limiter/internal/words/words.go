// Package words is the plumbing of a Limiter's decisions in words (see
// limiter.Decision.Format): the verbs of fmt.Formatter, and how a quota
// and the waits of an algorithms.Result print. What a decision and a
// rule's part say (allowed, refused, blocked, a shadow rule's would-be
// refusal) is the limiter's.
package words

import (
	"fmt"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Format writes text for %v and %s, with the waits for %+v, and fmt's
// form of a wrong verb for the others ("%!d(typ=text)").
func Format(f fmt.State, verb rune, typ string, text func(b []byte, waits bool) []byte) {
	var b []byte
	switch verb {
	case 'v', 's':
		b = text(b, f.Flag('+'))
	default:
		b = fmt.Appendf(b, "%%!%c(%s=", verb, typ)
		b = append(text(b, false), ')')
	}
	_, _ = f.Write(b)
}

// Quota appends what is left of p's quota: "3 left of 10/1m0s", or of a
// limit on units in flight "3 left of 10 concurrent-requests" (its unit),
// or "3 left" for a policy without a quota.
func Quota(b []byte, r *algorithms.Result, p algorithms.Policy) []byte {
	b = append(strconv.AppendInt(b, int64(r.Remaining), 10), " left"...)
	if p.Quota <= 0 {
		return b
	}
	b = strconv.AppendInt(append(b, " of "...), int64(p.Quota), 10)
	if p.InFlight() {
		return append(append(b, ' '), p.Unit...)
	}
	return append(append(b, '/'), p.Window.String()...)
}

// waits names the waits of a Result, in the order Waits writes them.
var waits = [...]struct {
	what string
	of   func(*algorithms.Result) time.Duration
}{
	{"retry after", func(r *algorithms.Result) time.Duration { return r.RetryAfter }},
	{"delay", func(r *algorithms.Result) time.Duration { return r.Delay }},
	{"more in", func(r *algorithms.Result) time.Duration { return r.NextAfter }},
	{"full again in", func(r *algorithms.Result) time.Duration { return r.ResetAfter }},
}

// Waits appends ", retry after 41s" and the like for each of r's waits
// that is positive: retry after, delay, more in, full again in.
func Waits(b []byte, r *algorithms.Result) []byte {
	for _, w := range waits {
		if d := w.of(r); d > 0 {
			b = Wait(append(append(b, ", "...), w.what...), d)
		}
	}
	return b
}

// Wait appends " " and d, or " never" for algorithms.Never.
func Wait(b []byte, d time.Duration) []byte {
	if d == algorithms.Never {
		return append(b, " never"...)
	}
	return append(append(b, ' '), d.String()...)
}
