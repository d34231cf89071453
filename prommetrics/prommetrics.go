// Package prommetrics turns the rate-limit middleware's events into
// Prometheus metrics. It is a module of its own, so that services that do
// not use Prometheus never download its client library.
//
//	c, err := prommetrics.New(prometheus.DefaultRegisterer, prommetrics.Options{})
//	limit := middleware.Must(rdb, rules, middleware.WithHook(c.Hook))
//
// The series (names prefixed with Options.Namespace, "ratelimit" by
// default):
//
//	ratelimit_decisions_total{rule, outcome}        counter
//	ratelimit_decision_duration_seconds{outcome}     histogram
//	ratelimit_backend_errors_total{cause}            counter
//	ratelimit_backend_state{state}                   gauge, 1 for the current state
//
// A decision counts once per rule it checked, with the rule's own verdict
// as outcome: allowed, denied, cached_denied (the local deny cache
// answered), shadow_allowed (denied, let through by shadow mode),
// fallback_allowed and fallback_denied (the in-process fallback decided
// while Redis was away), error (Redis failed and the failure policy
// applied) and no_identity (the rule's key function found none). The
// duration histogram has one observation per request decided, labelled
// with the request's outcome; its buckets run from 50 µs to 250 ms. Backend
// errors are counted by cause: timeout, unavailable (skipped while Redis
// is marked down), reply (Redis answered an error), network, other. The
// state gauge is up, down or fallback, as the latest event showed it.
//
// Labels are bounded by construction: rule names and fixed outcome and
// cause sets, never identities or paths. Options.RouteLabel adds the
// route pattern (Request.Pattern) to the decision series, which is bounded
// by the routes a service registers.
package prommetrics

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// Options configures New.
type Options struct {
	// Namespace prefixes every series name (default "ratelimit").
	Namespace string
	// RouteLabel adds a "route" label with the request's route pattern to
	// the decision series.
	RouteLabel bool
}

// Collector records middleware events; Hook is its entry point. It is safe
// for concurrent use.
type Collector struct {
	decisions *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	errors    *prometheus.CounterVec
	state     *prometheus.GaugeVec
	route     bool
}

// New registers the collector's series with reg.
func New(reg prometheus.Registerer, opts Options) (*Collector, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "ratelimit"
	}
	labels := []string{"rule", "outcome"}
	durationLabels := []string{"outcome"}
	if opts.RouteLabel {
		labels = append(labels, "route")
		durationLabels = append(durationLabels, "route")
	}
	c := &Collector{
		route: opts.RouteLabel,
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "decisions_total",
			Help: "Rate-limit decisions, per rule checked, by the rule's outcome."}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "decision_duration_seconds",
			Help:    "Time to decide a request, by outcome.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3}}, durationLabels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "backend_errors_total",
			Help: "Redis failures seen by the limiter, by cause."}, []string{"cause"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "backend_state",
			Help: "1 for the backend's current state (up, down, fallback), as the latest event showed it."}, []string{"state"}),
	}
	for _, col := range []prometheus.Collector{c.decisions, c.duration, c.errors, c.state} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	c.setState("up")
	return c, nil
}

// Hook records one event; pass it to middleware.WithHook.
func (c *Collector) Hook(e middleware.Event) {
	route := ""
	if c.route && e.Request != nil {
		route = e.Request.Pattern
	}
	d := e.Decision
	switch {
	case errors.Is(e.Err, keyfunc.ErrNoKey) || errors.Is(e.Err, middleware.ErrBadCost):
		c.count(e.Rules, "no_identity", route)
		return
	case e.Err != nil && !d.Fallback:
		c.count(e.Rules, "error", route)
		c.observe(e.Duration, "error", route)
		c.backendError(e.Err)
		return
	case e.Err != nil:
		c.backendError(e.Err)
	}
	for _, r := range d.Results {
		c.decisions.WithLabelValues(c.labels(r.Rule, outcome(d, e.Shadow, r.Allowed), route)...).Inc()
	}
	c.observe(e.Duration, outcome(d, e.Shadow, d.Allowed), route)
	switch {
	case d.Fallback:
		c.setState("fallback")
	case !d.Cached:
		c.setState("up")
	}
}

// outcome names a verdict given how the decision was made.
func outcome(d limiter.Decision, shadow, allowed bool) string {
	switch {
	case d.Fallback && allowed:
		return "fallback_allowed"
	case d.Fallback:
		return "fallback_denied"
	case allowed:
		return "allowed"
	case d.Cached:
		return "cached_denied"
	case shadow:
		return "shadow_allowed"
	}
	return "denied"
}

func (c *Collector) count(rules []string, outcome, route string) {
	for _, rule := range rules {
		c.decisions.WithLabelValues(c.labels(rule, outcome, route)...).Inc()
	}
}

func (c *Collector) labels(rule, outcome, route string) []string {
	if c.route {
		return []string{rule, outcome, route}
	}
	return []string{rule, outcome}
}

func (c *Collector) observe(d time.Duration, outcome, route string) {
	labels := []string{outcome}
	if c.route {
		labels = append(labels, route)
	}
	c.duration.WithLabelValues(labels...).Observe(d.Seconds())
}

// backendError counts a Redis failure by cause and follows the state.
func (c *Collector) backendError(err error) {
	cause := "other"
	var reply redis.Error
	var netErr net.Error
	switch {
	case errors.Is(err, limiter.ErrUnavailable):
		cause = "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		cause = "timeout"
	case errors.As(err, &reply):
		cause = "reply"
	case errors.As(err, &netErr):
		cause = "network"
	}
	c.errors.WithLabelValues(cause).Inc()
	if cause != "reply" {
		c.setState("down")
	}
}

func (c *Collector) setState(state string) {
	for _, s := range []string{"up", "down", "fallback"} {
		v := 0.0
		if s == state {
			v = 1
		}
		c.state.WithLabelValues(s).Set(v)
	}
}
