package grpclimit

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// unavailableWait is the RetryInfo of a call refused because the limiter
// could not decide it (WithFailClosed).
const unavailableWait = time.Second

// refused is the status of a call the layer did not admit, nil for an
// admitted one.
func refused(res *guard.Result) error {
	switch res.Outcome {
	case guard.Admitted:
		return nil
	case guard.Refused:
		return refusal(res.Decision).Err()
	case guard.NoIdentity:
		msg := fmt.Sprintf("ratelimit: rate limit %s found no identity in the call", res.Rule)
		var m interface{ Missing() string }
		if errors.As(res.Err, &m) {
			msg = fmt.Sprintf("ratelimit: rate limit %s needs %s", res.Rule, m.Missing())
		}
		return status.Error(codes.Unauthenticated, msg)
	case guard.BadCost:
		return status.Error(codes.InvalidArgument, "ratelimit: negative call cost")
	case guard.Canceled:
		return status.FromContextError(res.Err).Err() // ctx.Err() is nil while a passed deadline's timer has not fired
	case guard.Failed:
		st := status.New(codes.Unavailable, "rate limiting is unavailable; retry in 1 s")
		return withDetails(st, &errdetails.RetryInfo{RetryDelay: durationpb.New(unavailableWait)}).Err()
	}
	return status.Error(codes.Internal, "ratelimit: the call could not be decided")
}

// refusal is the status of a denied decision d (its waits as the layer
// advertises them): codes.ResourceExhausted, with a RetryInfo of d's wait
// rounded up to the millisecond (at least 1 ms; none when a rule can
// never admit the cost, when waiting cannot help) and a QuotaFailure with
// one violation per rule that refused, its subject the rule's name (a
// shadow rule's would-be refusal is not one).
func refusal(d limiter.Decision) *status.Status {
	qf := &errdetails.QuotaFailure{}
	var names, blocked []string
	for _, r := range d.Results {
		if !r.Refused() {
			continue
		}
		names = append(names, r.Rule)
		v := &errdetails.QuotaFailure_Violation{Subject: r.Rule, Description: violation(r)}
		if r.Blocked {
			blocked = append(blocked, r.Rule)
		}
		qf.Violations = append(qf.Violations, v)
	}
	wait := d.RetryAfter()
	if wait == algorithms.Never {
		msg := fmt.Sprintf("call cost exceeds what rate limit %s can ever admit", strings.Join(names, ", "))
		return withDetails(status.New(codes.ResourceExhausted, msg), qf)
	}
	wait = max(time.Millisecond, (wait + time.Millisecond - 1).Truncate(time.Millisecond))
	msg := fmt.Sprintf("rate limit %s exceeded; retry in %v", strings.Join(names, ", "), wait)
	if len(blocked) > 0 {
		msg = fmt.Sprintf("client blocked by rate limit %s; retry in %v", strings.Join(blocked, ", "), wait)
	}
	return withDetails(status.New(codes.ResourceExhausted, msg), &errdetails.RetryInfo{RetryDelay: durationpb.New(wait)}, qf)
}

// violation describes why rule r refused: its block, its quota, or a cost
// it can never admit.
func violation(r limiter.RuleResult) string {
	switch {
	case r.Blocked:
		return "client blocked"
	case r.RetryAfter == algorithms.Never:
		return fmt.Sprintf("cost exceeds the quota of %d", r.Policy.Quota)
	case r.Policy.InFlight():
		return fmt.Sprintf("all %d slots in use", r.Policy.Quota)
	}
	return fmt.Sprintf("quota of %d per %v exhausted", r.Policy.Quota, r.Policy.Window)
}

// withDetails is st with details; st alone if they cannot be encoded
// (they always can: they are well-formed messages).
func withDetails(st *status.Status, details ...protoadapt.MessageV1) *status.Status {
	if s, err := st.WithDetails(details...); err == nil {
		return s
	}
	return st
}
