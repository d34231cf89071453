package limiter

import (
	"fmt"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// Format writes the decision in words, for a log line or an operator:
// with %v (and %s) "allowed (per-ip: 3 left of 10/1m0s; global: 990
// left of 1000/1h0m0s)", each rule's part as RuleResult writes it; with
// %+v the waits too ("denied, retry after 41s (per-ip: refused, 0 left
// of 10/1m0s, retry after 41s, full again in 1m0s)"). It never writes an
// identity, nor what Settle keeps.
func (d Decision) Format(f fmt.State, verb rune) {
	format(f, verb, "limiter.Decision", d.appendText)
}

// Format writes the rule's part of a decision in words: with %v (and %s)
// its name, whether it refused ("refused", "blocked"; a shadow rule's
// "would refuse"), and what is left of its quota ("per-ip: 3 left of
// 10/1m0s"); with %+v also its waits (retry after, delay, more in, full
// again in) and the units it leased. It never writes an identity.
func (r RuleResult) Format(f fmt.State, verb rune) {
	format(f, verb, "limiter.RuleResult", r.appendText)
}

// format writes text for %v and %s, with the waits for %+v, and fmt's
// form of a wrong verb for the others.
func format(f fmt.State, verb rune, typ string, text func(b []byte, waits bool) []byte) {
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

// appendText appends the decision in words (see Decision.Format).
func (d *Decision) appendText(b []byte, waits bool) []byte {
	if d.Allowed {
		b = append(b, "allowed"...)
	} else {
		b = append(b, "denied"...)
	}
	if d.Fallback {
		b = append(b, ", by the fallback store"...)
	}
	if d.Cached {
		b = append(b, ", from the deny cache"...)
	}
	if wait := d.RetryAfter(); waits && wait > 0 {
		b = appendWait(append(b, ", retry after"...), wait)
	}
	b = append(b, " ("...)
	for i := range d.Results {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = d.Results[i].appendText(b, waits)
	}
	return append(b, ')')
}

// appendText appends the rule's part in words (see RuleResult.Format).
func (r *RuleResult) appendText(b []byte, waits bool) []byte {
	b = append(append(b, r.Rule...), ": "...)
	if r.Undecided {
		return append(b, "undecided"...)
	}
	if r.Shadow {
		b = append(b, "shadow, "...)
	}
	switch {
	case r.Allowed:
	case r.Blocked:
		b = append(b, "blocked, "...)
	case r.Shadow:
		b = append(b, "would refuse, "...)
	default:
		b = append(b, "refused, "...)
	}
	b = append(strconv.AppendInt(b, int64(r.Remaining), 10), " left"...)
	if r.Policy.Quota > 0 {
		b = strconv.AppendInt(append(b, " of "...), int64(r.Policy.Quota), 10)
		if r.Policy.InFlight() {
			b = append(append(b, ' '), r.Policy.Unit...)
		} else {
			b = append(append(b, '/'), r.Policy.Window.String()...)
		}
	}
	if !waits {
		return b
	}
	for _, w := range []struct {
		what string
		d    time.Duration
	}{{"retry after", r.RetryAfter}, {"delay", r.Delay}, {"more in", r.NextAfter}, {"full again in", r.ResetAfter}} {
		if w.d > 0 {
			b = appendWait(append(append(b, ", "...), w.what...), w.d)
		}
	}
	if r.Leased > 0 {
		b = strconv.AppendInt(append(b, ", leased "...), int64(r.Leased), 10)
	}
	return b
}

// appendWait appends " " and d, or " never" for algorithms.Never.
func appendWait(b []byte, d time.Duration) []byte {
	if d == algorithms.Never {
		return append(b, " never"...)
	}
	return append(append(b, ' '), d.String()...)
}
