// Package prommetrics turns the rate-limit events of package guard
// (guard.Event, which the HTTP middleware and the gRPC interceptors of
// module grpclimit report) into Prometheus metrics. It is a module of its
// own, so that services that do not use Prometheus never download its
// client library.
//
//	c, err := prommetrics.New(prometheus.DefaultRegisterer, prommetrics.Options{})
//	limit, err := middleware.New(rdb, rules, middleware.WithHook(c.Hook))
//	srv, err := grpclimit.New(store, grpcRules, grpclimit.WithHook(c.Hook))
//
// The series (names prefixed with Options.Namespace, "ratelimit" by
// default):
//
//	ratelimit_decisions_total{rule, outcome}        counter
//	ratelimit_decision_duration_seconds{outcome}     histogram
//	ratelimit_backend_errors_total{cause}            counter
//	ratelimit_backend_state{state}                   gauge, 1 for the current state
//	ratelimit_config_reloads_total{result}           counter, reloads of a rules file (Reload, for config.WithReloadHook): ok or error
//
// A decision counts once per rule it checked, with the rule's own verdict
// as outcome: allowed, denied, cached_denied (the local deny cache
// answered), shadow_allowed (denied, let through by shadow mode),
// would_deny (a shadow rule, limiter.Rule.Shadow, would have
// refused the request),
// fallback_allowed and fallback_denied (the in-process fallback decided
// while Redis was away), error (Redis failed and the failure policy
// applied; or the server is misconfigured), no_identity (the rule's key
// function found none, or a cost was negative), canceled
// (the client went away before the decision; not a Redis failure, and not
// counted as a backend error) and undecided (another rule denied the
// request before this one was asked: a leased rule's local denial, or
// the deny cache; guard.Event.RuleOutcome). The
// duration histogram has one observation per request decided, labelled
// with the request's outcome; its buckets run from 50 µs to 250 ms. Backend
// errors are counted by cause (limiter.Cause): timeout, unavailable
// (skipped while Redis is marked down), refused (a failed dial), reply
// (Redis answered an error), network, other. The
// state gauge is up, down or fallback, as the latest event showed it.
//
// Labels are bounded by construction: rule names and fixed outcome and
// cause sets, never identities or paths. Options.RouteLabel adds the
// route pattern (Request.Pattern) to the decision series, which is bounded
// by the routes a service registers. The gRPC interceptors of module
// grpclimit feed the same hook; their route is the call's full method
// ("/pkg.Service/Method"), its bytes that are not UTF-8, if any, replaced
// by U+FFFD. A gRPC server with an unknown-service handler (a proxy)
// reports whatever method its clients send, so the route label is bounded
// here: it takes at most 1000 distinct values, the first routes the
// Collector sees, each kept for its life (as its series are), and counts
// any later route, or one longer than 256 bytes, as route "other" (no
// route pattern or full method is "other": both have a "/"). A service's
// own routes appear with its first requests; a flood of made-up methods
// after that lands in "other" without displacing them.
package prommetrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/seed-bff0c9e1/ratelimit/guard"
)

// Options configures New.
type Options struct {
	// Namespace prefixes every series name (default "ratelimit").
	Namespace string
	// RouteLabel adds a "route" label with the request's route pattern to
	// the decision series: at most 1000 distinct values, then "other"
	// (see the package doc).
	RouteLabel bool
}

// Collector records guard events; Hook is its entry point. It is safe
// for concurrent use.
type Collector struct {
	decisions *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	errors    *prometheus.CounterVec
	state     *prometheus.GaugeVec
	reloads   *prometheus.CounterVec
	routes    *routeSet // nil without Options.RouteLabel

	stateMu sync.Mutex // one state set at a time: never two at 1, or none
}

// New registers the collector's series with reg. When one cannot be
// registered (prometheus.AlreadyRegisteredError: another collector, or a
// New on the same reg, has it), New returns that error and leaves reg as
// it found it.
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
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "decisions_total",
			Help: "Rate-limit decisions, per rule checked, by the rule's outcome."}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "decision_duration_seconds",
			Help:    "Time to decide a request, by outcome.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3}}, durationLabels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "backend_errors_total",
			Help: "Redis failures seen by the limiter, by cause."}, []string{"cause"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "backend_state",
			Help: "1 for the backend's current state (up, down, fallback), as the latest event showed it."}, []string{"state"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "config_reloads_total",
			Help: "Reloads of a rules file that read a changed file, by result (ok: the new rules are in force; error: the old ones stay)."}, []string{"result"}),
	}
	if err := registerAll(reg, c.decisions, c.duration, c.errors, c.state, c.reloads); err != nil {
		return nil, err
	}
	if opts.RouteLabel {
		c.routes = &routeSet{seen: map[string]bool{}}
	}
	c.setState("up")
	return c, nil
}

// registerAll registers cols with reg, all or none: when one fails, those
// registered before it are unregistered, so that a New may be tried
// again on the same registry.
func registerAll(reg prometheus.Registerer, cols ...prometheus.Collector) error {
	for i, col := range cols {
		if err := reg.Register(col); err != nil {
			for _, done := range cols[:i] {
				reg.Unregister(done)
			}
			return err
		}
	}
	return nil
}

// Hook records one event; pass it to middleware.WithHook or
// grpclimit.WithHook.
func (c *Collector) Hook(e guard.Event) {
	route := ""
	if c.routes != nil {
		route = c.routes.label(e.Route)
	}
	for i, rule := range e.Rules {
		c.decisions.WithLabelValues(c.labels(route, rule, e.RuleOutcome(i))...).Inc()
	}
	if e.Outcome != "no_identity" { // not decided: no duration
		c.duration.WithLabelValues(c.labels(route, e.Outcome)...).Observe(e.Duration.Seconds())
	}
	if e.Cause != "" {
		c.errors.WithLabelValues(string(e.Cause)).Inc()
	}
	if e.Backend != "" {
		c.setState(string(e.Backend))
	}
}

// Reload records a reload of a rules file; pass it to
// config.WithReloadHook. err is nil when the new rules are in force.
func (c *Collector) Reload(err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	c.reloads.WithLabelValues(result).Inc()
}

// labels are values, with the route last when the collector has it.
func (c *Collector) labels(route string, values ...string) []string {
	if c.routes != nil {
		return append(values, route)
	}
	return values
}

// states are the backend's states, the gauge's label values.
var states = []string{"up", "down", "fallback"}

func (c *Collector) setState(state string) {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	for _, s := range states {
		v := 0.0
		if s == state {
			v = 1
		}
		c.state.WithLabelValues(s).Set(v)
	}
}
