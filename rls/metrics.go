package rls

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// NearLimitRatio is the share of a limit above which used units are near
// it by default (Options.NearLimitRatio): the reference's default
// NEAR_LIMIT_RATIO. A limit of 10 per minute
// is near from its 9th unit (the threshold is 10 × 0.8 = 8, rounded
// down).
const NearLimitRatio = 0.8

// Metrics are a Server's Prometheus series (Options.Metrics), named
// under "ratelimit_rls_":
//
//	ratelimit_rls_hits_total{rule}               counter, the reference's total_hits
//	ratelimit_rls_within_limit_total{rule}       counter, within_limit
//	ratelimit_rls_near_limit_total{rule}         counter, near_limit
//	ratelimit_rls_over_limit_total{rule}         counter, over_limit
//	ratelimit_rls_shadow_mode_total{rule}        counter, shadow_mode
//	ratelimit_rls_failures_total{cause}          counter
//	ratelimit_rls_decision_duration_seconds{outcome} histogram
//	ratelimit_rls_config_reloads_total{result}   counter, ok or error
//
// The per-rule counters count hits (a descriptor's hits_addend, 1 by
// default), as the reference's do, by the limiter rule of the limit a
// descriptor matched (the names Limits gives; a limit override counts
// in its limit's rule). Each decided descriptor with a limit adds its
// hits to hits_total and, by its own verdict, to within_limit (it
// allowed, whether or not another limit refused the request) or to
// over_limit (it refused: the hits beyond the limit, all of them when
// the window was already full). near_limit counts the hits that took
// the window's use past Options.NearLimitRatio of the limit (0.8 by
// default) and up to the limit,
// on either verdict; shadow_mode, of a shadow_mode limit that would have
// refused, the hits over_limit counts (beyond the limit), as the
// reference's shadow_mode counts them. A descriptor that matched no
// limit, or an unlimited one, counts nowhere, so that the rule label
// takes values from the configuration only, never from a request. A
// decision that failed counts no hits.
//
// failures_total counts the decisions the limiter failed to make (those
// its fallback store made too), by cause: limiter.CauseOf's (timeout,
// unavailable, refused, reply, network, other), canceled (the caller's
// deadline or cancellation came first) or invalid (the limiter refused
// the checks). The histogram observes the limiter's decision of each
// request, labelled ok, over_limit (also when shadow mode answered OK)
// or error; its buckets run from 50 µs to about 200 ms.
//
// Metrics may serve several Servers in turn (one per configuration
// reload); a rule's series stays after a reload drops the rule. A nil
// *Metrics records nothing. It is safe for concurrent use.
type Metrics struct {
	hits, within, near, over, shadow *prometheus.CounterVec
	failures, reloads                *prometheus.CounterVec
	duration                         *prometheus.HistogramVec
	// The series a decision counts in, by rule and by outcome.
	hitsOf, withinOf, nearOf, overOf, shadowOf *series[prometheus.Counter]
	durationOf                                 *series[prometheus.Observer]
}

// The causes failures_total counts beside limiter.CauseOf's.
const (
	causeCanceled = "canceled"
	causeInvalid  = "invalid"
)

// NewMetrics registers a Server's series with reg; registering twice with
// one reg is an error. When one cannot be registered
// (prometheus.AlreadyRegisteredError), NewMetrics returns that error and
// leaves reg as it found it.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	perRule := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ratelimit", Subsystem: "rls", Name: name, Help: help}, []string{"rule"})
	}
	m := &Metrics{
		hits:   perRule("hits_total", "Hits of descriptors matching the rule's limit (the reference's total_hits)."),
		within: perRule("within_limit_total", "Hits the rule's limit allowed."),
		near:   perRule("near_limit_total", "Hits that took the rule's window past the near-limit ratio of its limit (80% by default), up to the limit."),
		over:   perRule("over_limit_total", "Hits beyond the rule's limit (refused, or would-be refused by a shadow_mode limit)."),
		shadow: perRule("shadow_mode_total", "Hits a shadow_mode limit would have refused."),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ratelimit", Subsystem: "rls", Name: "failures_total",
			Help: "Decisions the limiter failed to make, by cause."}, []string{"cause"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ratelimit", Subsystem: "rls", Name: "config_reloads_total",
			Help: "Configuration reloads, by result (ok: the new configuration is in force; error: the old one stays)."}, []string{"result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "ratelimit", Subsystem: "rls", Name: "decision_duration_seconds",
			Help: "Time the limiter took to decide a request, by outcome.", Buckets: prometheus.ExponentialBuckets(50e-6, 2, 13)}, []string{"outcome"}),
	}
	m.hitsOf, m.withinOf, m.nearOf = newSeries(m.hits.WithLabelValues), newSeries(m.within.WithLabelValues), newSeries(m.near.WithLabelValues)
	m.overOf, m.shadowOf, m.durationOf = newSeries(m.over.WithLabelValues), newSeries(m.shadow.WithLabelValues), newSeries(m.duration.WithLabelValues)
	cols := []prometheus.Collector{m.hits, m.within, m.near, m.over, m.shadow, m.failures, m.reloads, m.duration}
	for i, c := range cols {
		if err := reg.Register(c); err != nil {
			for _, done := range cols[:i] { // all or none: NewMetrics may be tried again on reg
				reg.Unregister(done)
			}
			return nil, err
		}
	}
	for _, c := range []limiter.Cause{limiter.CauseTimeout, limiter.CauseDown, limiter.CauseRefused, limiter.CauseReply, limiter.CauseNetwork, limiter.CauseOther, causeCanceled, causeInvalid} {
		m.failures.WithLabelValues(string(c))
	}
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	return m, nil
}

// Reload records a reload of the configuration; err is nil when the new
// configuration is in force.
func (m *Metrics) Reload(err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.reloads.WithLabelValues(result).Inc()
}

// decided records the limiter's decision d (or failure err) of p's
// checks, which took took; near is the share of a limit past which hits
// are near it.
func (m *Metrics) decided(p *plan, d limiter.Decision, err error, took time.Duration, near float64) {
	if m == nil {
		return
	}
	if err != nil {
		m.failures.WithLabelValues(failureCause(err)).Inc()
	}
	outcome := "ok"
	switch {
	case err != nil && !d.Fallback:
		m.durationOf.of("error").Observe(took.Seconds())
		return
	case !d.Allowed:
		outcome = "over_limit"
	}
	m.durationOf.of(outcome).Observe(took.Seconds())
	for i := range p.checks {
		m.count(p.checks[i].Rule, p.checks[i].Cost, &d.Results[i], d.Allowed, near)
	}
}

// count records hits of rule, decided as r in a decision that consumed
// when allowed is true (else nothing was consumed); near is the share of
// the limit past which hits are near it.
func (m *Metrics) count(rule string, hits int, r *limiter.RuleResult, allowed bool, near float64) {
	m.hitsOf.of(rule).Add(float64(hits))
	if r.Undecided {
		return // not asked: no verdict
	}
	quota := int64(r.Policy.Quota)
	nearAt := int64(math.Floor(float64(quota) * near))
	before := quota - min(max(int64(r.Remaining), 0), quota)
	if allowed && r.Allowed { // Remaining is after the hits
		before -= int64(hits)
	}
	after := before + int64(hits)
	if r.Allowed {
		m.withinOf.of(rule).Add(float64(hits))
		if after > nearAt {
			m.nearOf.of(rule).Add(float64(after - max(before, nearAt)))
		}
		return
	}
	over := float64(max(after-max(before, quota), 0))
	m.overOf.of(rule).Add(over)
	if before < quota {
		m.nearOf.of(rule).Add(float64(quota - max(before, nearAt)))
	}
	if r.Shadow {
		m.shadowOf.of(rule).Add(over) // the hits over, as over_limit counts them
	}
}

// failureCause is err's cause as failures_total labels it.
func failureCause(err error) string {
	switch c := limiter.CauseOf(err); {
	case c != "":
		return string(c)
	case errors.Is(err, limiter.ErrCheck):
		return causeInvalid
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return causeCanceled
	}
	return string(limiter.CauseOther)
}
