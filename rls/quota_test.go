package rls_test

import (
	"slices"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

const quotaConfig = `
domain: edge
descriptors:
  - key: tenant
    quota_mode: true
    value_to_metric: true
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 3}
`

// listed is the rule names of res's dynamic_metadata field key; nil
// when it has none.
func listed(res *rlsv3.RateLimitResponse, key string) []string {
	v := res.GetDynamicMetadata().GetFields()[key]
	if v == nil {
		return nil
	}
	names := []string{}
	for _, n := range v.GetListValue().GetValues() {
		names = append(names, n.GetStringValue())
	}
	return names
}

// TestQuotaMode: a descriptor over a quota_mode limit is answered OK with
// its limit and nothing remaining, and no duration_until_reset, as the
// reference's quota mode answers it (RateLimit-Reset still says when its
// window ends), and named in the metadata; its would-be refusal consumes
// nothing and holds back no other descriptor, which still refuses on its
// own.
func TestQuotaMode(t *testing.T) {
	c, err := rls.Parse("quota.yaml", []byte(quotaConfig))
	if err != nil {
		t.Fatal(err)
	}
	rules := rls.Limits(c)
	tenant, ip := rules[0].Name, rules[1].Name
	s := serve(t, miniBackend(t), quotaConfig, rls.Options{ResponseHeaders: true})
	both := func() *rlsv3.RateLimitResponse { return ask(t, s, desc("tenant", "t"), desc("remote_address", "a")) }
	same(t, "first", summary(both()), []any{ok, ok, uint32(1), ok, uint32(2)})
	same(t, "second", summary(both()), []any{ok, ok, uint32(0), ok, uint32(1)})
	res := both()
	same(t, "over the quota", summary(res), []any{ok, ok, uint32(0), ok, uint32(0)})
	if res.Statuses[0].CurrentLimit.GetRequestsPerUnit() != 2 {
		t.Errorf("over the quota: the status has no limit: %v", res.Statuses[0])
	}
	if res.Statuses[0].DurationUntilReset != nil || res.Statuses[1].DurationUntilReset == nil {
		t.Errorf("over the quota: duration_until_reset %v and %v, want none over the quota, one within the limit", res.Statuses[0].DurationUntilReset, res.Statuses[1].DurationUntilReset)
	}
	if got := headerMap(t, res)[rls.DefaultResetHeader]; got != "3570" { // the clock is at 10:00:30
		t.Errorf("over the quota: %s %q, want 3570, the window's end", rls.DefaultResetHeader, got)
	}
	if got := listed(res, rls.QuotaExceededKey); !slices.Equal(got, []string{tenant}) || listed(res, rls.RefusedKey) != nil {
		t.Errorf("over the quota: metadata %v, want %s [%s] alone", res.GetDynamicMetadata(), rls.QuotaExceededKey, tenant)
	}
	res = both()
	same(t, "refused by the other", summary(res), []any{over, ok, uint32(0), over, uint32(0)})
	if res.Statuses[0].DurationUntilReset != nil {
		t.Errorf("refused by the other: over the quota with duration_until_reset %v", res.Statuses[0].DurationUntilReset)
	}
	if !slices.Equal(listed(res, rls.RefusedKey), []string{ip}) || !slices.Equal(listed(res, rls.QuotaExceededKey), []string{tenant}) {
		t.Errorf("refused by the other: metadata %v", res.GetDynamicMetadata())
	}
	if got := listed(ask(t, s, desc("tenant", "u")), rls.QuotaExceededKey); got != nil {
		t.Errorf("within the quota: metadata lists %v", got)
	}
}

// TestGlobalQuotaMode: with Options.QuotaMode every limit is in quota
// mode: a request over one is answered OK, its status OK with nothing
// remaining and no duration_until_reset, the rule named under
// QuotaExceededKey; it counts on no
// limit (all or nothing, as under ShadowMode).
func TestGlobalQuotaMode(t *testing.T) {
	const cfg = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: tenant
    rate_limit: {unit: hour, requests_per_unit: 5}
`
	c, err := rls.Parse("global.yaml", []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ip := rls.Limits(c)[0].Name
	s := serve(t, miniBackend(t), cfg, rls.Options{QuotaMode: true})
	both := func() *rlsv3.RateLimitResponse { return ask(t, s, desc("remote_address", "a"), desc("tenant", "t")) }
	same(t, "within", summary(both()), []any{ok, ok, uint32(0), ok, uint32(4)})
	res := both()
	same(t, "over one limit", summary(res), []any{ok, ok, uint32(0), ok, uint32(4)})
	if res.Statuses[0].DurationUntilReset != nil {
		t.Errorf("over one limit: duration_until_reset %v, want none", res.Statuses[0].DurationUntilReset)
	}
	if !slices.Equal(listed(res, rls.QuotaExceededKey), []string{ip}) || listed(res, rls.RefusedKey) != nil {
		t.Errorf("over one limit: metadata %v, want %s [%s] alone", res.GetDynamicMetadata(), rls.QuotaExceededKey, ip)
	}
}
