package rls

import (
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// The reference's names for the fields Options.ResponseHeaders adds (its
// LIMIT_LIMIT_HEADER, LIMIT_REMAINING_HEADER and LIMIT_RESET_HEADER).
const (
	DefaultLimitHeader     = "RateLimit-Limit"
	DefaultRemainingHeader = "RateLimit-Remaining"
	DefaultResetHeader     = "RateLimit-Reset"
)

// retryAfterHeader is the field that says, on a refusal, when to come
// back.
const retryAfterHeader = "Retry-After"

// withHeaderDefaults is o with the reference's header names where o names
// none.
func withHeaderDefaults(o Options) Options {
	if o.LimitHeader == "" {
		o.LimitHeader = DefaultLimitHeader
	}
	if o.RemainingHeader == "" {
		o.RemainingHeader = DefaultRemainingHeader
	}
	if o.ResetHeader == "" {
		o.ResetHeader = DefaultResetHeader
	}
	return o
}

// addHeaders sets res's response_headers_to_add, as the reference does,
// from the binding descriptor (see binding) of the decision d made at:
// its limit, its remaining units and the whole seconds, rounded up, to
// its window's end (its duration_until_reset, which a status over a
// quota_mode limit does not carry); and, when
// res is OVER_LIMIT, Retry-After: the decision's wait in whole seconds,
// rounded up (none when no wait can admit the request: its hits are
// above the limit). Nothing when no descriptor has a limit.
func (p *plan) addHeaders(res *rlsv3.RateLimitResponse, d limiter.Decision, o Options, at time.Time) {
	i := p.binding(d)
	if i < 0 {
		return
	}
	st := res.Statuses[i]
	until, _ := untilReset(p.limits[i], at, &d.Results[p.check[i]]) // binding asked the limiter
	reset := ceilSeconds(until)
	res.ResponseHeadersToAdd = []*corev3.HeaderValue{
		{Key: o.LimitHeader, Value: strconv.FormatUint(uint64(st.CurrentLimit.RequestsPerUnit), 10)},
		{Key: o.RemainingHeader, Value: strconv.FormatUint(uint64(st.LimitRemaining), 10)},
		{Key: o.ResetHeader, Value: strconv.FormatInt(reset, 10)},
	}
	if wait := d.RetryAfter(); res.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT && wait != algorithms.Never {
		res.ResponseHeadersToAdd = append(res.ResponseHeadersToAdd,
			&corev3.HeaderValue{Key: retryAfterHeader, Value: strconv.FormatInt(max(1, ceilSeconds(wait)), 10)})
	}
}

// binding is the index of the descriptor the headers describe, or -1:
// among the descriptors with a limit that the decision asked, one that
// refused, the longest wait first (the reference takes one that refused,
// its last), else the one with the least remaining units, the first of
// equals (as the reference).
func (p *plan) binding(d limiter.Decision) int {
	best := -1
	var bestRes *limiter.RuleResult
	for i, l := range p.limits {
		if l == nil || l.Unlimited {
			continue
		}
		r := &d.Results[p.check[i]]
		if r.Undecided {
			continue
		}
		if best < 0 || binds(r, bestRes) {
			best, bestRes = i, r
		}
	}
	return best
}

// binds reports whether r binds more than cur: a refusal over an
// admission, of two refusals the longer wait, else the fewer units left.
func binds(r, cur *limiter.RuleResult) bool {
	switch {
	case r.Refused() != cur.Refused():
		return r.Refused()
	case r.Refused():
		return r.RetryAfter > cur.RetryAfter
	}
	return remaining(r) < remaining(cur)
}

// remaining is what a result reports as limit_remaining.
func remaining(r *limiter.RuleResult) int {
	if !r.Allowed {
		return 0
	}
	return max(r.Remaining, 0)
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	return int64((max(d, 0) + time.Second - 1) / time.Second)
}
