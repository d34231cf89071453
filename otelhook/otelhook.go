// Package otelhook records the rate-limit events of package guard
// (guard.Event, from the HTTP middleware and the gRPC interceptors of
// module grpclimit) through OpenTelemetry: the metrics prommetrics
// records, through the OTel metrics API, and a span per decision, a child
// of the request's span (the event's Context). It is a module of its own,
// so that services that do not use OpenTelemetry never download it.
//
//	hook, err := otelhook.New(otelhook.Options{})
//	limit, err := middleware.New(rdb, rules, middleware.WithHook(hook.Hook))
//
// Instruments (meter "github.com/seed-bff0c9e1/ratelimit"):
//
//	ratelimit.decisions         counter, attributes rule and outcome
//	ratelimit.decision.duration histogram in seconds, attribute outcome
//	ratelimit.backend.errors    counter, attribute cause
//	ratelimit.backend.state     gauge, attribute state: 1 for the current one
//	ratelimit.config.reloads    counter, attribute result: reloads of a rules file (Reload, for config.WithReloadHook), ok or error
//
// with the outcomes, causes and states of package prommetrics. Their
// attributes take bounded sets of values: rule names and those fixed
// sets. No instrument or span carries the event's route, which a gRPC
// server with an unknown-service handler (a proxy) takes from its
// clients: any string, as many as they send. The span,
// "ratelimit.decide", covers the decision (it is recorded when the
// decision returns, with its start time) and carries ratelimit.rules,
// ratelimit.outcome, ratelimit.cached and ratelimit.fallback; a Redis
// failure sets its status to Error (a request without an identity, or
// whose client went away, does not).
package otelhook

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-bff0c9e1/ratelimit/guard"
)

const scope = "github.com/seed-bff0c9e1/ratelimit"

// Options configures New.
type Options struct {
	// MeterProvider provides the instruments; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// TracerProvider provides the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Recorder records guard events; Hook is its entry point. It is safe
// for concurrent use.
type Recorder struct {
	tracer    trace.Tracer
	decisions metric.Int64Counter
	duration  metric.Float64Histogram
	errors    metric.Int64Counter
	state     metric.Int64Gauge
	reloads   metric.Int64Counter

	stateMu sync.Mutex // one state recorded at a time: never two at 1, or none
}

// New creates the instruments.
func New(opts Options) (*Recorder, error) {
	mp, tp := opts.MeterProvider, opts.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	m := mp.Meter(scope)
	r := &Recorder{tracer: tp.Tracer(scope)}
	var err error
	if r.decisions, err = m.Int64Counter("ratelimit.decisions",
		metric.WithDescription("Rate-limit decisions, per rule checked, by the rule's outcome.")); err != nil {
		return nil, err
	}
	if r.duration, err = m.Float64Histogram("ratelimit.decision.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to decide a request, by outcome."),
		metric.WithExplicitBucketBoundaries(50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3)); err != nil {
		return nil, err
	}
	if r.errors, err = m.Int64Counter("ratelimit.backend.errors",
		metric.WithDescription("Redis failures seen by the limiter, by cause.")); err != nil {
		return nil, err
	}
	if r.state, err = m.Int64Gauge("ratelimit.backend.state",
		metric.WithDescription("1 for the backend's current state (up, down, fallback), as the latest event showed it.")); err != nil {
		return nil, err
	}
	if r.reloads, err = m.Int64Counter("ratelimit.config.reloads",
		metric.WithDescription("Reloads of a rules file that read a changed file, by result (ok: the new rules are in force; error: the old ones stay).")); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload records a reload of a rules file; pass it to
// config.WithReloadHook. err is nil when the new rules are in force.
func (r *Recorder) Reload(err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	r.reloads.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", result)))
}

// Hook records one event; pass it to middleware.WithHook or
// grpclimit.WithHook.
func (r *Recorder) Hook(e guard.Event) {
	ctx := context.Background()
	if e.Context != nil {
		ctx = e.Context
	}
	end := time.Now()
	_, span := r.tracer.Start(ctx, "ratelimit.decide", trace.WithTimestamp(end.Add(-e.Duration)))
	for i, rule := range e.Rules {
		r.decisions.Add(ctx, 1, metric.WithAttributes(attribute.String("rule", rule), attribute.String("outcome", e.RuleOutcome(i))))
	}
	if e.Outcome != "no_identity" { // not decided: no duration
		r.duration.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(attribute.String("outcome", e.Outcome)))
	}
	if e.Cause != "" {
		r.errors.Add(ctx, 1, metric.WithAttributes(attribute.String("cause", string(e.Cause))))
		span.SetStatus(codes.Error, string(e.Cause))
	}
	if e.Backend != "" {
		r.setState(ctx, string(e.Backend))
	}
	span.SetAttributes(
		attribute.StringSlice("ratelimit.rules", e.Rules),
		attribute.String("ratelimit.outcome", e.Outcome),
		attribute.Bool("ratelimit.cached", e.Decision.Cached),
		attribute.Bool("ratelimit.fallback", e.Decision.Fallback))
	span.End(trace.WithTimestamp(end))
}

// states are the backend's states, the gauge's attribute values.
var states = []string{"up", "down", "fallback"}

// setState records 1 for state and 0 for the others.
func (r *Recorder) setState(ctx context.Context, state string) {
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	for _, st := range states {
		v := int64(0)
		if st == state {
			v = 1
		}
		r.state.Record(ctx, v, metric.WithAttributes(attribute.String("state", st)))
	}
}
