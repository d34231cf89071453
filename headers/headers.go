// Package headers writes rate-limit response headers from a decision.
//
// Two families are supported, separately or together:
//
//	X-RateLimit-Limit      the binding rule's quota (Policy.Quota)
//	X-RateLimit-Remaining  the binding rule's Remaining (never negative)
//	X-RateLimit-Reset      Unix epoch seconds, rounded up, when the binding
//	                       rule is back to its full quota (as GitHub and
//	                       httprate use it); not the time to retry
//	Retry-After            on a denied response: whole seconds, rounded up,
//	                       at least 1, the longest wait among denying rules
//
// and the fields of draft-ietf-httpapi-ratelimit-headers-10, one list member
// per rule, named by the rule:
//
//	RateLimit-Policy: "per-ip";q=100;w=60, "global";q=10000;w=60
//	RateLimit: "per-ip";r=42;t=17, "global";r=9000;t=60
//
// where q is the quota, w the window in seconds, r the remaining quota and t
// the seconds until additional quota is available (a delta, never an
// epoch): one unit's refill for the buckets and GCRA, the oldest unit
// leaving a sliding log, the end of a fixed window; for a rule that denied
// the request, its wait, as Retry-After says; left out while no quota is in
// use. A concurrency limit's member has the quota unit and no window,
// "in-flight";q=10;qu="concurrent-requests". Its waits in a Decision are
// the oldest slots' expiry, the latest a slot can free up; the middleware
// shortens them before writing (see middleware.WithConcurrencyRetryAfter).
//
// The binding rule is the one with the least Remaining; on a denied request,
// the denying rule that frees up last. Headers are written with Set, and a
// nested limiter merges its values with those an outer one wrote (see
// Names.Write): a response describes every limiter it passed.
package headers

import (
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/sf"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Names are the header names written; an empty name is not written.
type Names struct {
	Limit, Remaining, Reset string
	RetryAfter              string
	Policy, RateLimit       string
	// QuotaParam, WindowParam, RemainingParam and ResetParam rename the
	// draft's list parameters (q, w, r, t; an empty name means the
	// draft's), for when the draft renames them.
	QuotaParam, WindowParam, RemainingParam, ResetParam string
	// Shadow, when true, writes shadow rules' results
	// (limiter.RuleResult.Shadow) like the others: a would-be refusal can
	// then be the binding rule of an admitted response. By default they
	// are left out, so that clients are not told of limits that are not
	// enforced.
	Shadow bool
}

// XRateLimit writes the X-RateLimit-* family and Retry-After: the
// middleware's default.
var XRateLimit = Names{Limit: "X-RateLimit-Limit", Remaining: "X-RateLimit-Remaining", Reset: "X-RateLimit-Reset", RetryAfter: "Retry-After"}

// IETF writes the draft's RateLimit-Policy and RateLimit fields, and
// Retry-After.
var IETF = Names{RetryAfter: "Retry-After", Policy: "RateLimit-Policy", RateLimit: "RateLimit"}

// Both writes the X-RateLimit-* family, the IETF fields and Retry-After.
var Both = Names{Limit: XRateLimit.Limit, Remaining: XRateLimit.Remaining, Reset: XRateLimit.Reset,
	RetryAfter: "Retry-After", Policy: IETF.Policy, RateLimit: IETF.RateLimit}

// Write sets the headers of d: the X-RateLimit-* family for the binding
// rule, RateLimit-Policy for every rule, RateLimit for every rule that was
// decided (not Undecided) and, when d is denied, Retry-After
// (unless the cost can never be admitted); shadow rules only with
// n.Shadow. The Reset epoch counts from
// d.At, the instant of the decision (Redis TIME by default), so every app
// server sends the same value.
//
// Nested limiters (an outer middleware that already wrote its headers
// before calling this one) are merged, not overwritten: the IETF lists keep
// the outer members and replace a member of the same name; the
// X-RateLimit-* family describes the most restrictive rule (a denying
// decision, else the least remaining); Retry-After is the longest wait
// (an outer one written as an HTTP date counts from d.At, and is written
// back in seconds).
func (n Names) Write(h http.Header, d limiter.Decision) {
	if !n.Shadow {
		d = enforced(d)
	}
	var v fields
	if !d.Allowed {
		if wait := d.RetryAfter(); wait != algorithms.Never {
			secs := exact.RetrySeconds(wait)
			if v := get(h, n.RetryAfter); v != "" {
				secs = max(secs, outerRetry(v, d.At))
			}
			v.set(h, n.RetryAfter, strconv.FormatInt(secs, 10))
		}
	}
	if b := binding(d); b != nil && n.restricts(h, b, d.Allowed) {
		limit, remaining, reset := decimals(int64(b.Policy.Quota), int64(max(0, b.Remaining)), ceilSeconds(time.Duration(d.At.UnixNano())+b.ResetAfter))
		v.set(h, n.Limit, limit)
		v.set(h, n.Remaining, remaining)
		v.set(h, n.Reset, reset)
	}
	v.setList(h, n, n.Policy, d, true)
	v.setList(h, n, n.RateLimit, d, false)
}

// appendPolicy appends the parameters of r's RateLimit-Policy member to b.
// Every rule has one, also one that was not decided.
func (n Names) appendPolicy(b []byte, r *limiter.RuleResult) []byte {
	b = param(b, n.QuotaParam, "q", int64(r.Policy.Quota))
	if r.Policy.InFlight() {
		// A quota of requests in flight has a unit and no window.
		b = append(b, `;qu="`...)
		b = append(b, r.Policy.Unit...)
		return append(b, '"')
	}
	return param(b, n.WindowParam, "w", max(1, ceilSeconds(r.Policy.Window)))
}

// appendRateLimit appends the parameters of r's RateLimit member to b.
func (n Names) appendRateLimit(b []byte, r *limiter.RuleResult) []byte {
	b = param(b, n.RemainingParam, "r", int64(max(0, r.Remaining)))
	if t := untilMore(r); t > 0 {
		b = param(b, n.ResetParam, "t", ceilSeconds(t))
	}
	return b
}

// enforced is d without its shadow rules' results (copied only when it
// has some).
func enforced(d limiter.Decision) limiter.Decision {
	for i, r := range d.Results {
		if r.Shadow {
			results := slices.Clone(d.Results[:i])
			for _, r := range d.Results[i+1:] {
				if !r.Shadow {
					results = append(results, r)
				}
			}
			d.Results = results
			return d
		}
	}
	return d
}

// decimals formats three integers in one allocation: substrings of one
// string.
func decimals(a, b, c int64) (string, string, string) {
	var buf [3 * 20]byte
	f := strconv.AppendInt(buf[:0], a, 10)
	i := len(f)
	f = strconv.AppendInt(f, b, 10)
	j := len(f)
	s := string(strconv.AppendInt(f, c, 10))
	return s[:i], s[i:j], s[j:]
}

// param appends ";name=v" to b, name defaulting to the draft's.
func param(b []byte, name, draft string, v int64) []byte {
	if name == "" {
		name = draft
	}
	b = append(b, ';')
	b = append(b, name...)
	b = append(b, '=')
	return strconv.AppendInt(b, v, 10)
}

// untilMore is the draft's "t" for a rule: the time until additional quota
// is available (NextAfter), or, for a rule that denied the request, its
// wait, as Retry-After says it; 0 (t left out) when no quota is in use.
func untilMore(r *limiter.RuleResult) time.Duration {
	if !r.Allowed && r.RetryAfter != algorithms.Never {
		return r.RetryAfter
	}
	return r.NextAfter
}

// restricts reports whether rule b of a decision (allowed or not) is more
// restrictive than what an outer limiter already wrote in h: a denial
// always is; otherwise the least remaining wins.
func (n Names) restricts(h http.Header, b *limiter.RuleResult, allowed bool) bool {
	if !allowed || n.Remaining == "" {
		return true
	}
	v := get(h, n.Remaining)
	if v == "" { // the common case: no outer limiter (and no error to allocate)
		return true
	}
	prev, err := strconv.Atoi(v)
	return err != nil || b.Remaining < prev
}

// binding is the rule whose state the X-RateLimit-* family reports: on a
// deny, the denying rule that frees up last; otherwise the rule with the
// least Remaining. It is nil for an empty decision.
func binding(d limiter.Decision) (r *limiter.RuleResult) {
	for i := range d.Results {
		if c := &d.Results[i]; r == nil || binds(c, r, d.Allowed) {
			r = c
		}
	}
	return r
}

// binds reports whether c is more binding than cur.
func binds(c, cur *limiter.RuleResult, allowed bool) bool {
	if !allowed && c.Allowed != cur.Allowed {
		return !c.Allowed
	}
	if allowed || c.Allowed {
		return c.Remaining < cur.Remaining
	}
	return c.RetryAfter > cur.RetryAfter
}

// outerRetry is the wait in whole seconds that an outer limiter's
// Retry-After v says, counted from at: its delay-seconds, or the time to
// its HTTP date (RFC 9110 allows either form), rounded up; 0 when it
// cannot be read or the date has passed.
func outerRetry(v string, at time.Time) int64 {
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		return secs
	}
	if date, err := http.ParseTime(v); err == nil {
		return ceilSeconds(date.Sub(at))
	}
	return 0
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// fields sets a response's fields from one backing array of values, so
// that they cost one allocation between them instead of one each (what
// http.Header.Set does).
type fields struct{ values []string }

// set sets the field name, if any, to value, as http.Header.Set does.
func (f *fields) set(h http.Header, name, value string) {
	if name == "" {
		return
	}
	if len(f.values) == cap(f.values) {
		f.values = make([]string, 0, 4)
	}
	f.values = append(f.values, value)
	n := len(f.values)
	h[key(name)] = f.values[n-1 : n : n] // capped: an Add elsewhere copies
}

// key is name as http.Header stores it (see textproto.CanonicalMIMEHeaderKey).
// The canonical forms of the names of Both, which the middleware writes
// (it canonicalizes the names it is given once), are recognised without
// examining each byte.
func key(name string) string {
	if slices.Contains(canonicalBoth[:], name) {
		return name
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

var canonicalBoth = func() (keys [6]string) {
	for i, name := range []string{Both.Limit, Both.Remaining, Both.Reset, Both.RetryAfter, Both.Policy, Both.RateLimit} {
		keys[i] = textproto.CanonicalMIMEHeaderKey(name)
	}
	return keys
}()

// get is h.Get(name), "" for an empty name.
func get(h http.Header, name string) string {
	if v := h[key(name)]; name != "" && len(v) > 0 {
		return v[0]
	}
	return ""
}

// setList sets the field name to one Structured Field list member per
// rule, "name" followed by its parameters: RateLimit-Policy's when policy
// is true (see n.appendPolicy), for every rule; else RateLimit's (see
// n.appendRateLimit), for every decided rule (a rule that was not asked
// has no state to report), and for every rule of a cached refusal
// (limiter.Decision.Cached: the rules it did not ask report what the
// refusal it repeats found of them). Members an outer limiter wrote are kept
// first, unless a rule of d has the same name, which replaces them, or
// they are not well-formed list members (an older draft's dictionary, an
// unterminated string), which would make the whole field unparsable. Rule
// names are limited to [A-Za-z0-9._-], so they need no escaping inside an
// sf-string. A list left without members (only shadow rules, outer
// members all dropped) is not sent. The list is built on the stack
// (unless it is long): the field's value is its one allocation.
func (f *fields) setList(h http.Header, n Names, name string, d limiter.Decision, policy bool) {
	if name == "" {
		return
	}
	var buf [128]byte
	b := buf[:0]
	for _, field := range h[key(name)] {
		for _, member := range sf.Members(field) {
			if sf.Valid(member) && !hasRule(d, sf.Name(member)) {
				if len(b) > 0 {
					b = append(b, ", "...)
				}
				b = append(b, member...)
			}
		}
	}
	for i := range d.Results {
		r := &d.Results[i]
		if r.Undecided && !policy && !d.Cached {
			continue // not asked: no state to report
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '"')
		b = append(b, r.Rule...)
		b = append(b, '"')
		if policy {
			b = n.appendPolicy(b, r)
		} else {
			b = n.appendRateLimit(b, r)
		}
	}
	if len(b) == 0 {
		delete(h, key(name)) // an empty list is not sent at all
		return
	}
	f.set(h, name, string(b))
}

func hasRule(d limiter.Decision, name string) bool {
	for _, r := range d.Results {
		if r.Rule == name {
			return true
		}
	}
	return false
}
