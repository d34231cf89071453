package rls

import (
	"math"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// response is the answer for decision d of p's checks: OVER_LIMIT
// overall when a limit refused (OK in shadow or quota mode), and per
// descriptor its code (OK over a quota_mode limit, or in quota mode),
// limit, remaining units and the time to its window's end (none over a
// quota_mode limit: the reference keeps only the code, limit and
// remaining units there; an unlimited limit: OK, 2^32-1 remaining, as
// the reference answers it); on OVER_LIMIT the rules that refused (see
// RefusedKey), and the quota_mode rules exceeded (QuotaExceededKey);
// with the headers o asks for.
func (p *plan) response(d limiter.Decision, o Options) *rlsv3.RateLimitResponse {
	res := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	if !d.Allowed && !o.ShadowMode && !o.QuotaMode {
		res.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
	}
	at := d.At
	if at.IsZero() {
		at = time.Now()
	}
	var parts []statusParts
	res.Statuses, parts = newStatuses(len(p.limits))
	for i, l := range p.limits {
		st := res.Statuses[i]
		if l == nil {
			continue
		}
		if l.Unlimited {
			st.LimitRemaining = math.MaxUint32 // as the reference reports it
			continue
		}
		st.CurrentLimit = parts[i].current(l)
		r := &d.Results[p.check[i]]
		overQuota := !r.Undecided && !r.Allowed && (l.Quota || o.QuotaMode)
		if reset, ok := untilReset(l, at, r); ok && !overQuota {
			st.DurationUntilReset = parts[i].until(reset)
		}
		switch {
		case r.Undecided: // another limit refused first: nothing to report
		case !r.Allowed && !overQuota:
			st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
		default: // allowed, or over a quota_mode limit: OK, as the reference answers it
			st.LimitRemaining = saturated(remaining(r))
		}
	}
	p.addRefused(res, d)
	p.addQuotaExceeded(res, d, o.QuotaMode)
	if o.ResponseHeaders {
		p.addHeaders(res, d, o, at)
	}
	if o.ResponseDynamicMetadata {
		p.addRequest(res)
	}
	return res
}

// undecided is the fail-open answer: OK, each descriptor with its limit
// (and the request, under o.ResponseDynamicMetadata).
func (p *plan) undecided(o Options) *rlsv3.RateLimitResponse {
	res := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	var parts []statusParts
	res.Statuses, parts = newStatuses(len(p.limits))
	for i, l := range p.limits {
		switch {
		case l == nil:
		case l.Unlimited:
			res.Statuses[i].LimitRemaining = math.MaxUint32
		default:
			res.Statuses[i].CurrentLimit = parts[i].current(l)
		}
	}
	if o.ResponseDynamicMetadata {
		p.addRequest(res)
	}
	return res
}

// untilReset is a descriptor's duration_until_reset, for its limit l and
// its check's result r, decided at: for a fixed window, the time to the
// end of its window (windows aligned to the Unix epoch); for the other
// algorithms, the time until the rule's state is back to fresh
// (r.ResetAfter): a sliding window's or log's counts all gone, a bucket
// full again, GCRA's whole burst available. ok is false when r was not
// decided (another rule refused first, without the store) and so tells
// nothing of the state. A leased limit's is r.ResetAfter whatever its
// algorithm: its pool's last take's, less the time since (a decision
// served from the pool is on the local clock, not Redis's); but a limit
// of 0 (a limit override of 0 on a leased limit) is decided without the
// limiter (see refusals), on its window. The status
// carries it rounded up to whole seconds (statusParts.until).
func untilReset(l *envoy.Limit, at time.Time, r *limiter.RuleResult) (d time.Duration, ok bool) {
	if r.Undecided {
		return 0, false
	}
	if _, fixed := l.Algorithm.(algorithms.FixedWindow); fixed && (l.Lease == 0 || l.PerUnit == 0) {
		w := l.Window
		return w - time.Duration(at.UnixNano()%int64(w)), true
	}
	return r.ResetAfter, true
}
