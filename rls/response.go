package rls

import (
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// response is the answer for decision d of p's checks: OVER_LIMIT
// overall when a limit refused (OK in shadow mode), and per descriptor
// its code, limit, remaining units and the time to its window's end;
// on OVER_LIMIT the rules that refused (see RefusedKey); with the
// headers o asks for.
func (p *plan) response(d limiter.Decision, o Options) *rlsv3.RateLimitResponse {
	res := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	if !d.Allowed && !o.ShadowMode {
		res.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
	}
	at := d.At
	if at.IsZero() {
		at = time.Now()
	}
	res.Statuses = make([]*rlsv3.RateLimitResponse_DescriptorStatus, len(p.limits))
	for i, l := range p.limits {
		st := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK}
		res.Statuses[i] = st
		if l == nil || l.unlimited {
			continue
		}
		st.CurrentLimit = l.current()
		st.DurationUntilReset = durationpb.New(untilReset(at, l.unit.length))
		r := &d.Results[p.check[i]]
		switch {
		case r.Undecided: // another limit refused first: nothing to report
		case !r.Allowed:
			st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
		default:
			st.LimitRemaining = uint32(remaining(r))
		}
	}
	p.addRefused(res, d)
	if o.ResponseHeaders {
		p.addHeaders(res, d, o)
	}
	return res
}

// undecided is the fail-open answer: OK, each descriptor with its limit.
func (p *plan) undecided() *rlsv3.RateLimitResponse {
	res := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	res.Statuses = make([]*rlsv3.RateLimitResponse_DescriptorStatus, len(p.limits))
	for i, l := range p.limits {
		res.Statuses[i] = &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK}
		if l != nil && !l.unlimited {
			res.Statuses[i].CurrentLimit = l.current()
		}
	}
	return res
}

// current is l as a response's current_limit.
func (l *limit) current() *rlsv3.RateLimitResponse_RateLimit {
	c := &rlsv3.RateLimitResponse_RateLimit{Name: l.name, RequestsPerUnit: uint32(l.perUnit), Unit: l.unit.proto}
	if l.multiplier > 1 {
		c.UnitMultiplier = wrapperspb.UInt32(l.multiplier)
	}
	return c
}

// untilReset is the time from at to the end of its window of length w,
// windows aligned to the Unix epoch.
func untilReset(at time.Time, w time.Duration) time.Duration {
	return w - time.Duration(at.UnixNano()%int64(w))
}
