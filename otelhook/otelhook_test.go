package otelhook_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/otelhook"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// 2 admitted, 1 denied, then Redis goes away and 1 request fails on it:
// the instruments hold exactly that, and each decision is a span under the
// request's span.
func TestInstrumentsAndSpans(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	rec, err := otelhook.New(otelhook.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.WithTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rules := []middleware.Rule{{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}}, Identity: keyfunc.IP()}}
	lim, err := limiter.New(store, guard.Limits(rules), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	limit, err := middleware.NewWithLimiter(lim, rules, middleware.WithHook(rec.Hook), middleware.WithErrorHandler(func(*http.Request, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))

	parent, request := tp.Tracer("test").Start(context.Background(), "request")
	send := func() {
		r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(parent)
		r.RemoteAddr = "203.0.113.9:1"
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	for range 3 {
		send()
	}
	srv.Close()
	send()
	request.End()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	histograms := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					counts[m.Name+attrs(p.Attributes)] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range data.DataPoints {
					counts[m.Name+attrs(p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					histograms[m.Name+attrs(p.Attributes)] = p.Count
				}
			}
		}
	}
	for name, want := range map[string]int64{
		"ratelimit.decisions{outcome=allowed,rule=per-ip}": 2,
		"ratelimit.decisions{outcome=denied,rule=per-ip}":  1,
		"ratelimit.decisions{outcome=error,rule=per-ip}":   1,
		"ratelimit.backend.state{state=down}":              1,
		"ratelimit.backend.state{state=up}":                0,
	} {
		if got := counts[name]; got != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, got, want, counts)
		}
	}
	if got := histograms["ratelimit.decision.duration{outcome=allowed}"]; got != 2 {
		t.Errorf("duration observations for allowed: %d, want 2", got)
	}
	var decides []sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == "ratelimit.decide" {
			decides = append(decides, s)
		}
	}
	if len(decides) != 4 {
		t.Fatalf("%d decision spans, want 4", len(decides))
	}
	for i, s := range decides {
		if s.Parent().SpanID() != request.SpanContext().SpanID() {
			t.Errorf("span %d is not a child of the request's span", i)
		}
		if s.EndTime().Before(s.StartTime()) {
			t.Errorf("span %d ends before it starts", i)
		}
	}
	if got := attrs(attribute.NewSet(decides[2].Attributes()...)); got != `{ratelimit.cached=false,ratelimit.fallback=false,ratelimit.outcome=denied,ratelimit.rules=["per-ip"]}` {
		t.Errorf("denied span attributes %s", got)
	}
	if decides[3].Status().Code != codes.Error || decides[0].Status().Code == codes.Error {
		t.Errorf("statuses: %v, %v; want the failed decision's span in error, not the others", decides[0].Status(), decides[3].Status())
	}
}

// attrs renders a set as {k=v,...} in key order.
func attrs(set attribute.Set) string {
	out := "{"
	for i, kv := range set.ToSlice() {
		if i > 0 {
			out += ","
		}
		out += string(kv.Key) + "=" + kv.Value.String()
	}
	return out + "}"
}

// A request whose client went away before its decision (the middleware's
// event carries context.Canceled) is counted as canceled: its span is not
// in error, and no backend error or state is recorded.
func TestCanceledIsNoError(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	rec, err := otelhook.New(otelhook.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
	if err != nil {
		t.Fatal(err)
	}
	rec.Hook(guard.Event{Context: context.Background(), Err: context.Canceled, Rules: []string{"per-ip"},
		Outcome: "canceled"}) // as the middleware classifies it (middleware.TestClientCancellationIsNotABackendFailure)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					got = append(got, m.Name+attrs(p.Attributes))
				}
			case metricdata.Gauge[int64]:
				for _, p := range data.DataPoints {
					got = append(got, m.Name+attrs(p.Attributes))
				}
			}
		}
	}
	if want := []string{"ratelimit.decisions{outcome=canceled,rule=per-ip}"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("recorded %v, want %v", got, want)
	}
	if ended := spans.Ended(); len(ended) != 1 || ended[0].Status().Code == codes.Error {
		t.Errorf("spans %v, want one, not in error", ended)
	}
}

// A request refused by a leased rule's pool, in a stack of two, asks the
// other rule nothing: it counts as undecided for that rule, not allowed.
func TestUndecidedRule(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	rec, err := otelhook.New(otelhook.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}}, Identity: keyfunc.IP()},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}, Lease: time.Second}, Identity: keyfunc.Constant("all")},
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lim, err := limiter.New(store, guard.Limits(rules), limiter.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	limit, err := middleware.NewWithLimiter(lim, rules, middleware.WithHook(rec.Hook))
	if err != nil {
		t.Fatal(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	for i, want := range []int{200, 429} { // the second refused by the global rule's pool
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if w.Code != want {
			t.Fatalf("request %d: %d, want %d", i, w.Code, want)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if data, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "ratelimit.decisions" {
				for _, p := range data.DataPoints {
					got[attrs(p.Attributes)] += p.Value
				}
			}
		}
	}
	want := map[string]int64{
		"{outcome=allowed,rule=per-ip}": 1, "{outcome=undecided,rule=per-ip}": 1,
		"{outcome=allowed,rule=global}": 1, "{outcome=denied,rule=global}": 1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("ratelimit.decisions %v, want %v", got, want)
	}
}
