package otelhook_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/otelhook"
)

// The recorder's cost per event on the SDK's providers (a manual reader,
// and spans sampled but exported nowhere): a request denied by one of two
// rules, as the middleware reports it.
func BenchmarkHook(b *testing.B) {
	rec, err := otelhook.New(otelhook.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		TracerProvider: sdktrace.NewTracerProvider(),
	})
	if err != nil {
		b.Fatal(err)
	}
	e := guard.Event{Context: context.Background(), Route: "/", Rules: []string{"per-ip", "global"},
		Outcome: "denied", Backend: "up", Duration: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		rec.Hook(e)
	}
}
