package rls

import (
	"math"
	"strings"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
)

// statusParts are a descriptor's status and the messages it may point
// to, allocated together.
type statusParts struct {
	status rlsv3.RateLimitResponse_DescriptorStatus
	limit  rlsv3.RateLimitResponse_RateLimit
	reset  durationpb.Duration
}

// newStatuses is n descriptor statuses, each OK and nothing more, and the
// parts behind them: one allocation for the n, not one per message.
func newStatuses(n int) ([]*rlsv3.RateLimitResponse_DescriptorStatus, []statusParts) {
	parts := make([]statusParts, n)
	statuses := make([]*rlsv3.RateLimitResponse_DescriptorStatus, n)
	for i := range parts {
		parts[i].status.Code = rlsv3.RateLimitResponse_OK
		statuses[i] = &parts[i].status
	}
	return statuses, parts
}

// current is l as a response's current_limit, in s: a limit above
// 2^32-1, which the library's rules file allows, is sent as 2^32-1.
func (s *statusParts) current(l *envoy.Limit) *rlsv3.RateLimitResponse_RateLimit {
	c := &s.limit
	c.Name, c.RequestsPerUnit, c.Unit = l.Name, saturated(l.PerUnit), unitCodes[l.Unit]
	if l.Multiplier > 1 {
		c.UnitMultiplier = wrapperspb.UInt32(l.Multiplier)
	}
	return c
}

// until is d as a response's duration_until_reset, in s: in whole
// seconds, rounded up (a positive d below 1 s is 1 s), as the reference
// sends it. Envoy builds X-RateLimit-Reset from the seconds alone: a
// fraction would be cut, and a client sent back before the reset.
func (s *statusParts) until(d time.Duration) *durationpb.Duration {
	s.reset.Seconds, s.reset.Nanos = ceilSeconds(d), 0
	return &s.reset
}

// saturated is n as a response's uint32 field: 2^32-1 when n is above
// it, rather than n's low bits.
func saturated(n int) uint32 {
	return uint32(min(max(n, 0), math.MaxUint32))
}

// unitCodes are a response's units by the names of envoy.Limit.Unit (the
// enum's, in lower case); "", no unit, is absent: UNKNOWN.
var unitCodes = func() map[string]rlsv3.RateLimitResponse_RateLimit_Unit {
	m := map[string]rlsv3.RateLimitResponse_RateLimit_Unit{}
	for name, v := range rlsv3.RateLimitResponse_RateLimit_Unit_value {
		m[strings.ToLower(name)] = rlsv3.RateLimitResponse_RateLimit_Unit(v)
	}
	return m
}()
