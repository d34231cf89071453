package limiter

import (
	"fmt"
	"strconv"

	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/words"
)

// Format writes the decision in words, for a log line or an operator:
// with %v (and %s) "allowed (per-ip: 3 left of 10/1m0s; global: 990
// left of 1000/1h0m0s)", each rule's part as RuleResult writes it; with
// %+v the waits too ("denied, retry after 41s (per-ip: refused, 0 left
// of 10/1m0s, retry after 41s, full again in 1m0s)"). It never writes an
// identity, nor what Settle keeps.
func (d Decision) Format(f fmt.State, verb rune) {
	words.Format(f, verb, "limiter.Decision", d.appendText)
}

// Format writes the rule's part of a decision in words: with %v (and %s)
// its name, whether it refused ("refused", "blocked"; a shadow rule's
// "would refuse"), and what is left of its quota ("per-ip: 3 left of
// 10/1m0s"); with %+v also its waits (retry after, delay, more in, full
// again in) and the units it leased. It never writes an identity.
func (r RuleResult) Format(f fmt.State, verb rune) {
	words.Format(f, verb, "limiter.RuleResult", r.appendText)
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
		b = words.Wait(append(b, ", retry after"...), wait)
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
	b = words.Quota(b, &r.Result, r.Policy)
	if !waits {
		return b
	}
	b = words.Waits(b, &r.Result)
	if r.Leased > 0 {
		b = strconv.AppendInt(append(b, ", leased "...), int64(r.Leased), 10)
	}
	return b
}
